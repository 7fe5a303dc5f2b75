import { execFileSync } from 'node:child_process';
import { repoRoot } from './cli.ts';
import { dropTemplateDatabases, nameTestRun, testDatabaseAdminUrl } from './test-store.ts';

/**
 * Vitest global setup. The CLI and server-process tests run what users run: bin/dragnet.js on
 * the compiled dist/. Running it once here builds dist/ when src/ is newer, before the test
 * files start their commands in parallel. Its teardown drops the template stores' databases that
 * the test processes made (test-app.ts).
 */
export default function buildDist(): () => Promise<void> {
  const run = nameTestRun();
  execFileSync(process.execPath, ['bin/dragnet.js', '--help'], {
    cwd: repoRoot,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return async () => {
    if (testDatabaseAdminUrl) await dropTemplateDatabases(testDatabaseAdminUrl, run);
  };
}
