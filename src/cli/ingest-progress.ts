import cliProgress from 'cli-progress';
import type { IngestProgress } from '../modules/sources/index.ts';

/** A progress bar on a terminal; plain lines (one per source) when output is not a TTY. */
export function createIngestProgress(quiet: boolean): IngestProgress {
  const tty = Boolean(process.stderr.isTTY) && !quiet;
  let bar: cliProgress.SingleBar | null = null;
  return {
    start(source, total, unit) {
      if (!tty) return;
      bar = new cliProgress.SingleBar(
        {
          format: `{source} [{bar}] {percentage}% | {value}/{total} ${unit}`,
          stream: process.stderr,
          hideCursor: true,
        },
        cliProgress.Presets.shades_classic,
      );
      bar.start(total, 0, { source });
    },
    advance(amount) {
      bar?.increment(amount);
    },
    finish(line) {
      bar?.stop();
      bar = null;
      if (!quiet) process.stderr.write(line + '\n');
    },
  };
}
