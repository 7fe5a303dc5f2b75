import type { Command } from 'commander';
import { AppError } from '../../lib/errors.ts';
import type { CliContext } from '../cli-context.ts';

export function registerRulesCommands(program: Command, cli: CliContext): void {
  const rulesCommand = program.command('rules').description('monitoring rules');

  rulesCommand
    .command('tick')
    .description('evaluate due rules now, then run async jobs and deliver pending notifications')
    .option('--at <time>', 'evaluate as of this ISO 8601 time instead of now')
    .action(async (options) => {
      const at = options.at ? new Date(options.at) : new Date();
      if (Number.isNaN(at.getTime())) throw new AppError('validation_failed', '--at must be an ISO 8601 time');
      await cli.withContainer(async (container, out) => {
        const report = await container.runner.tick(at);
        let jobsRun = 0;
        let delivered = 0;
        for (let n; (n = await container.jobs.runDue()) > 0;) jobsRun += n;
        for (let n; (n = await container.notifier.dispatchPending()) > 0;) delivered += n;
        const summary = { at: at.toISOString(), ...report, jobs_run: jobsRun, notifications_handled: delivered };
        out.emit(
          summary,
          () =>
            `tick at ${summary.at}: ${report.due} due, ${report.ran} ran, ${report.skipped} already done, ${report.matches} new matches; ${jobsRun} jobs, ${delivered} notifications`,
        );
      });
    });
}
