import { execFileSync } from 'node:child_process';
import { repoRoot } from './cli.ts';

/**
 * Vitest global setup. The CLI and server-process tests run what users run: bin/dragnet.js on
 * the compiled dist/. Running it once here builds dist/ when src/ is newer, before the test
 * files start their commands in parallel.
 */
export default function buildDist(): void {
  execFileSync(process.execPath, ['bin/dragnet.js', '--help'], {
    cwd: repoRoot,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}
