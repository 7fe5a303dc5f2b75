import type { Command } from 'commander';
import type { CliContext } from '../cli-context.ts';
import { table } from '../output.ts';

export function registerCollectorsCommands(program: Command, cli: CliContext): void {
  const collectorsCommand = program
    .command('collectors')
    .description('collectors: schedule, cursor and health (docs/collectors.md); `collectors run <name>` runs one now')
    .action(async () => {
      await cli.withContainer(async (container, out) => {
        const status = await container.collectors.status();
        const when = (iso: string | null) => iso ?? '-';
        out.emit(status, () =>
          table(
            status.map((c) => ({
              name: c.name,
              source: c.source ?? '(all)',
              enabled: c.enabled ? 'yes' : 'no',
              every: `${c.interval_seconds}s`,
              'last success': when(c.last_success_at),
              'last error': c.last_error
                ? `${when(c.last_error_at)} ${c.last_error}${c.consecutive_failures > 1 ? ` (${c.consecutive_failures} in a row)` : ''}`
                : '-',
              'items last/total': `${c.items_last_run ?? '-'}/${c.items_total}`,
              'next run': c.running ? 'running' : when(c.next_run_at),
            })),
            ['name', 'source', 'enabled', 'every', 'last success', 'last error', 'items last/total', 'next run'],
          ),
        );
      });
    });

  collectorsCommand
    .command('run <names...>')
    .description('run the named collectors once now, whatever their schedule (exit 1 when one fails)')
    .action(async (names: string[]) => {
      await cli.withContainer(async (container, out) => {
        const reports = await container.collectors.runNow(names);
        out.emit(reports, () =>
          reports
            .map(
              (r) =>
                `${r.name}: ${r.outcome === 'ran' ? `${r.items} items stored` : r.outcome === 'busy' ? 'already running in another process' : `${r.outcome}: ${r.error ?? ''}`}`,
            )
            .join('\n'),
        );
        if (reports.some((r) => r.outcome !== 'ran')) process.exitCode = 1;
      });
    });
}
