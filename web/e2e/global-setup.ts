import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const web = path.resolve(import.meta.dirname, '..');
const builtIndex = path.join(web, 'dist', 'index.html');

/** The newest modification under the dashboard's sources (folders count: a deleted file changes one). */
function newestSource(): number {
  let newest = Math.max(...['index.html', 'vite.config.ts'].map((file) => statSync(path.join(web, file)).mtimeMs));
  const walk = (dir: string) => {
    newest = Math.max(newest, statSync(dir).mtimeMs);
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (!/\.test\.tsx?$/.test(entry.name)) newest = Math.max(newest, statSync(full).mtimeMs);
    }
  };
  walk(path.join(web, 'src'));
  return newest;
}

/**
 * The end-to-end tests drive the dashboard the server serves from web/dist: build it first when
 * it is missing or older than its sources, so the browser never runs yesterday's code.
 */
export default function setup() {
  if (existsSync(builtIndex) && statSync(builtIndex).mtimeMs >= newestSource()) return;
  // In a process of its own: under vitest NODE_ENV is "test", which would build React's
  // development bundles.
  execFileSync(process.execPath, [path.join(web, '..', 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--config', path.join(web, 'vite.config.ts'), '--logLevel', 'warn'], {
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: 'inherit',
  });
}
