import { defineConfig } from 'vitest/config';
import { scaled } from './test/support/wait.ts';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/support/build-dist.ts'],
    testTimeout: scaled(30_000),
    hookTimeout: scaled(60_000),
    pool: 'forks',
    // Two cores: more workers only add contention for argon2 and the stores.
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
  },
});
