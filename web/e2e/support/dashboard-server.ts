import type { Page } from 'playwright-core';
import { runCli } from '../../../test/support/cli.ts';
import { startServer, type ServerProcess } from '../../../test/support/server-process.ts';
import { createTestStoreLocation, type TestStoreLocation } from '../../../test/support/test-store.ts';
import { scaled } from '../../../test/support/wait.ts';

/** Fills the sign-in form the page shows with the demo account's credentials and sends it. */
export async function signInAsDemo(page: Page, dashboard: DashboardServer): Promise<void> {
  await page.getByLabel('Email').fill(dashboard.demo.email);
  await page.getByLabel('Password').fill(dashboard.demo.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

export interface DashboardServer {
  baseUrl: string;
  server: ServerProcess;
  location: TestStoreLocation;
  /** The account `dragnet demo` created, with its demo data loaded. */
  demo: { email: string; password: string };
  stop(): Promise<void>;
}

/**
 * What a newcomer does: `npm start` on an empty data folder, then `npx dragnet demo` beside it.
 * The store is SQLite, or PostgreSQL with DRAGNET_TEST_DATABASE_URL, as in the other suites.
 */
export async function startDashboardServer(env: Record<string, string> = {}): Promise<DashboardServer> {
  const location = await createTestStoreLocation();
  const server = await startServer({ ...location.env, HOST: '127.0.0.1', PORT: '0', ...env });
  try {
    const demo = await runCli(['demo', '--json'], { env: { ...location.env, ...env }, timeoutMs: scaled(180_000) });
    if (demo.code !== 0) throw new Error(`dragnet demo failed: ${demo.stderr}`);
    const { email, password } = JSON.parse(demo.stdout) as { email: string; password: string };
    return {
      baseUrl: server.baseUrl,
      server,
      location,
      demo: { email, password },
      async stop() {
        if (server.child.exitCode === null && server.child.signalCode === null) {
          server.child.kill('SIGTERM');
          await server.exited;
        }
        await location.drop();
      },
    };
  } catch (error) {
    server.child.kill('SIGKILL');
    await location.drop();
    throw error;
  }
}
