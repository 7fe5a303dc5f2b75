import { defineConfig } from 'vitest/config';
import { scaled } from '../test/support/wait.ts';

/**
 * End-to-end tests of the dashboard (`npm run test:e2e`): Debian's Chromium, driven by
 * playwright-core, against the real server started as `npm start` starts it, on a fresh store.
 * One file at a time: each starts a server and a browser, and the machine has two cores.
 */
export default defineConfig({
  root: import.meta.dirname,
  test: {
    include: ['e2e/**/*.e2e.test.ts'],
    environment: 'node',
    globalSetup: ['./e2e/global-setup.ts', '../test/support/test-run.ts'],
    testTimeout: scaled(120_000),
    hookTimeout: scaled(180_000),
    pool: 'forks',
    poolOptions: { forks: { singleFork: true } },
    fileParallelism: false,
  },
});
