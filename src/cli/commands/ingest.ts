import type { Command } from 'commander';
import { AppError } from '../../lib/errors.ts';
import type { CliContext } from '../cli-context.ts';
import { createIngestProgress } from '../ingest-progress.ts';

export function registerIngestCommand(program: Command, cli: CliContext): void {
  program
    .command('ingest <target> <inputs...>')
    .description("load data into a source's store (dragnet ingest --help lists the targets)")
    .addHelpText('after', () =>
      [
        '',
        'Targets:',
        ...(cli.preloadedSources?.listIngesters() ?? []).map(
          (i) => `  ${i.name.padEnd(20)} ${i.description} (formats: ${i.formats.join(', ')})`,
        ),
      ].join('\n'),
    )
    .option('--format <format>', "input format (default: the target's first format, usually auto)")
    .option('--category <name>', 'messenger: category of channels whose records name none')
    .option(
      '--shortener <host>',
      'url_shortener: the shortener of dumps without a #PREFIX: header (v.gd or https://v.gd/)',
    )
    .action(async (target: string, inputs: string[], options) => {
      const { findIngester, listIngesters } = await cli.loadSources();
      const ingester = findIngester(target);
      if (!ingester)
        throw new AppError(
          'validation_failed',
          `unknown ingest target ${target}; one of: ${listIngesters()
            .map((i) => i.name)
            .join(', ')}`,
        );
      const format = (options.format as string | undefined) ?? ingester.formats[0]!;
      if (!ingester.formats.includes(format))
        throw new AppError('validation_failed', `--format must be one of: ${ingester.formats.join(', ')}`);
      await cli.withContainer(async (container, out) => {
        const report = await ingester.run(container.sourceContext, inputs, {
          format,
          category: options.category,
          shortener: options.shortener,
          progress: createIngestProgress(out.json),
        });
        out.emit(report.summary, () => report.lines.join('\n'));
        if (report.failed) process.exitCode = 1;
      });
    });
}
