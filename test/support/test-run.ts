import { dropTemplateDatabases, nameTestRun, testDatabaseAdminUrl } from './test-store.ts';

/**
 * Vitest global setup of every suite that makes test stores (the server's, the dashboard's
 * component and end-to-end suites): names the run, so that its test processes name their
 * template databases after it, and drops those when the run ends.
 */
export default function testRun(): () => Promise<void> {
  const run = nameTestRun();
  return async () => {
    if (testDatabaseAdminUrl) await dropTemplateDatabases(testDatabaseAdminUrl, run);
  };
}
