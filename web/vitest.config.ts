import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

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
    setupFiles: ['./src/test/setup.ts'],
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
  },
});
