import { Option, type Command } from 'commander';
import { loadConfig } from '../../config.ts';
import { stderrLog } from '../../lib/log.ts';
import { wholeNumber } from '../arguments.ts';
import type { CliContext } from '../cli-context.ts';

export function registerWorkerCommand(program: Command, cli: CliContext): void {
  program
    .command('worker')
    .description('run only the scheduler and workers (rule evaluation, async jobs, notifications)')
    .addOption(
      new Option('--metrics-port <port>', 'serve /metrics, /healthz and /readyz on HOST:<port>')
        .env('DRAGNET_WORKER_METRICS_PORT')
        .argParser(wholeNumber),
    )
    .action(async (options: { metricsPort?: number }) => {
      const config = loadConfig();
      const container = await cli.loadContainer(config);
      const { startScheduler } = await import('../../jobs/scheduler.ts');
      const log = stderrLog;
      // Listening first: a port in use fails the command before any work starts. Loaded only
      // here, as in serve: a worker without the port needs no HTTP stack.
      const operations =
        options.metricsPort === undefined
          ? null
          : await (
              await import('../../operations-server.ts')
            ).startOperationsServer(container, { host: config.host, port: options.metricsPort });
      const scheduler = startScheduler(container, { pollMs: config.schedulerPollMs, log });
      const collectors = container.collectors.start({ pollMs: config.schedulerPollMs, log });
      process.stdout.write(
        `Dragnet worker running (store: ${container.store.engine})${operations ? `; metrics on ${operations.url}/metrics` : ''}\n`,
      );
      for (const warning of await (await import('../../db/maintenance.ts')).autovacuumWarnings(container.store))
        log(`warning: ${warning}`);
      const stop = async () => {
        await operations?.close();
        await collectors.stop();
        await scheduler.stop();
        await container.close();
        process.exit(0);
      };
      // A shutdown that fails half-way must still end the process, and say why.
      const stopOrExit = () => {
        stop().catch((error: unknown) => {
          process.stderr.write(`worker shutdown failed: ${(error as Error).message}\n`);
          process.exit(1);
        });
      };
      process.once('SIGTERM', stopOrExit);
      process.once('SIGINT', stopOrExit);
    });
}
