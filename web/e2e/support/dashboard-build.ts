import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

export const webDir = path.resolve(import.meta.dirname, '..', '..');
export const distDir = path.join(webDir, 'dist');
const builtIndex = path.join(distDir, 'index.html');

/** The newest modification under the dashboard's sources (folders count: a deleted file changes one). */
function newestSource(): number {
  let newest = Math.max(...['index.html', 'vite.config.ts'].map((file) => statSync(path.join(webDir, file)).mtimeMs));
  const walk = (dir: string) => {
    newest = Math.max(newest, statSync(dir).mtimeMs);
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (!/\.test\.tsx?$/.test(entry.name)) newest = Math.max(newest, statSync(full).mtimeMs);
    }
  };
  walk(path.join(webDir, 'src'));
  return newest;
}

/**
 * Builds web/dist when it is missing or older than its sources, so a browser test or benchmark
 * never runs yesterday's code. In a process of its own with NODE_ENV=production: under vitest
 * NODE_ENV is "test", which would build React's development bundles.
 */
export function ensureDashboardBuilt(): void {
  if (existsSync(builtIndex) && statSync(builtIndex).mtimeMs >= newestSource()) return;
  const vite = path.join(webDir, '..', 'node_modules', 'vite', 'bin', 'vite.js');
  execFileSync(
    process.execPath,
    [vite, 'build', '--config', path.join(webDir, 'vite.config.ts'), '--logLevel', 'warn'],
    {
      env: { ...process.env, NODE_ENV: 'production' },
      stdio: 'inherit',
    },
  );
}
