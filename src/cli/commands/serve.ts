import type { Command } from 'commander';
import { loadConfig } from '../../config.ts';

export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('run the API server with the scheduler and workers (the same as npm start)')
    .option('--no-worker', 'API only: leave rule evaluation and deliveries to other processes')
    .action(async (options) => {
      // Loaded only here: every other command stays free of the HTTP stack's start-up cost.
      const { serve } = await import('../../main.ts');
      await serve(loadConfig(), { withWorker: options.worker });
    });
}
