import cliProgress from 'cli-progress';
import type { IngestProgress, SourceResult } from '../modules/search/ingest/ingest.service.ts';

/** A progress bar on a terminal; plain lines (one per source) when output is not a TTY. */
export function createIngestProgress(quiet: boolean): IngestProgress {
  const tty = Boolean(process.stderr.isTTY) && !quiet;
  let bar: cliProgress.SingleBar | null = null;
  return {
    start(source, total, unit) {
      if (!tty) return;
      bar = new cliProgress.SingleBar(
        { format: `{source} [{bar}] {percentage}% | {value}/{total} ${unit}`, stream: process.stderr, hideCursor: true },
        cliProgress.Presets.shades_classic,
      );
      bar.start(total, 0, { source });
    },
    advance(amount) {
      bar?.increment(amount);
    },
    finish(result: SourceResult) {
      bar?.stop();
      bar = null;
      if (quiet) return;
      const line = result.ok
        ? `${result.source}: ${result.channels} channels, ${result.added} messages added, ${result.duplicates} duplicates skipped, ${result.rejected.length} rejected`
        : `${result.source}: FAILED, nothing stored: ${(result.error ?? '').replace(`${result.source}: `, '')}`;
      process.stderr.write(line + '\n');
    },
  };
}
