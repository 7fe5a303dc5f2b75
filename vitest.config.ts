import { defineConfig } from 'vitest/config';
import { scaled } from './test/support/wait.ts';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/support/build-dist.ts', 'test/support/test-run.ts'],
    testTimeout: scaled(30_000),
    hookTimeout: scaled(60_000),
    pool: 'forks',
    // A test file's first import of the app's module graph took seconds of CPU (hundreds of modules
    // through Vite's transform), repeated for every file: one graph per worker instead. No test
    // file changes module state that another relies on; each builds its own apps and stores.
    isolate: false,
    // Two cores: more workers only add contention for argon2 and the stores.
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
  },
});
