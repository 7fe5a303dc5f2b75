import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';
import { scaled } from '../test/support/wait.ts';

/**
 * Component tests of the dashboard (`npm run test:web`): React components in happy-dom against a
 * fetch that answers like the API. Apart from the server suite (vitest.config.ts), which never
 * sees web/.
 */
export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  test: {
    include: ['src/**/*.test.{ts,tsx}'],
    environment: 'happy-dom',
    // Each test signs in and searches on a real store (argon2 hashing included).
    testTimeout: scaled(30_000),
    hookTimeout: scaled(60_000),
    setupFiles: ['./src/test/setup.ts'],
    globalSetup: ['../test/support/test-run.ts'],
    // Transformed as for Node, not for a browser: the real server these tests talk to runs in the
    // same process and needs file: URLs in import.meta.url.
    testTransformMode: { ssr: ['**/*'] },
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
  },
});
