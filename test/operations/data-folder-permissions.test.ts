import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createUserByCli, runCli } from '../support/cli.ts';
import { startServer } from '../support/server-process.ts';
import { createKeysInDataFolderLocation as freshLocation } from '../support/backup-key.ts';
import { testEngine } from '../support/test-store.ts';
import { scaled } from '../support/wait.ts';

/**
 * The data folder holds the keys, the store, raw leak files and search history: only its owner
 * may read any of it, whatever umask the service manager gives dragnet (this test process runs
 * with the usual 022, which is what the children inherit).
 */

const CLI_TEST_MS = scaled(180_000);
const PASSWORD = 'private files only please';

/** Every entry below `folder` (itself included) whose mode is not owner-only: `name mode`. */
function notPrivate(folder: string): string[] {
  const found: string[] = [];
  const visit = (file: string) => {
    const stat = statSync(file);
    const mode = stat.mode & 0o777;
    if (mode !== (stat.isDirectory() ? 0o700 : 0o600))
      found.push(`${path.relative(folder, file) || '.'} ${mode.toString(8)}`);
    if (stat.isDirectory()) for (const name of readdirSync(file)) visit(path.join(file, name));
  };
  visit(folder);
  return found;
}

const scratch = mkdtempSync(path.join(tmpdir(), 'dragnet-modes-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe(`the data folder is its owner's alone (${testEngine})`, () => {
  it(
    'the server and the CLI create the store, its -wal/-shm, keys, search history and raw leak files owner-only',
    async () => {
      const location = await freshLocation();
      expect(process.umask()).toBe(0o022);
      const env = location.cliEnv;
      rmSync(location.dataDir, { recursive: true });
      await createUserByCli(env, { org: 'Acme', email: 'soc@acme.example', password: PASSWORD });
      const leak = path.join(scratch, 'dump.txt');
      writeFileSync(leak, 'alice@acme.example:hunter2\n');
      const ingested = await runCli(['ingest', 'raw_leak_extended', leak], { env });
      expect(ingested.code, ingested.stderr).toBe(0);

      const server = await startServer({ ...env, PORT: '0' });
      try {
        const login = await fetch(`${server.baseUrl}/token/`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: 'soc@acme.example', password: PASSWORD }),
        });
        const { access } = (await login.json()) as { access: string };
        const search = await fetch(`${server.baseUrl}/service/messenger-search-create/`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${access}` },
          body: JSON.stringify({ query: 'acme' }),
        });
        expect(search.status).toBe(200);
        // While the server holds the store open, its write-ahead log and shared memory exist.
        const files = readdirSync(location.dataDir);
        expect(files).toEqual(expect.arrayContaining(['secret.key', 'card-hash.key', 'raw-leaks']));
        if (testEngine === 'sqlite')
          expect(files).toEqual(
            expect.arrayContaining([
              'dragnet.sqlite',
              'dragnet.sqlite-wal',
              'dragnet.sqlite-shm',
              'search-history.sqlite',
            ]),
          );
        expect(readdirSync(path.join(location.dataDir, 'raw-leaks')).length).toBeGreaterThan(0);
        expect(notPrivate(location.dataDir)).toEqual([]);
      } finally {
        server.child.kill('SIGTERM');
        await server.exited;
      }
      expect(notPrivate(location.dataDir)).toEqual([]);
    },
    CLI_TEST_MS,
  );

  it(
    'a data folder an older version left readable by everyone is made owner-only at the next start',
    async () => {
      const location = await freshLocation();
      await createUserByCli(location.cliEnv, { org: 'Acme', email: 'soc@acme.example', password: PASSWORD });
      const leak = path.join(scratch, 'old-dump.txt');
      writeFileSync(leak, 'bob@acme.example:letmein\n');
      expect((await runCli(['ingest', 'raw_leak_extended', leak], { env: location.cliEnv })).code).toBe(0);
      const open = (file: string) => {
        chmodSync(file, statSync(file).isDirectory() ? 0o755 : 0o644);
        if (statSync(file).isDirectory()) for (const name of readdirSync(file)) open(path.join(file, name));
      };
      open(location.dataDir);
      expect(notPrivate(location.dataDir).length).toBeGreaterThan(3);

      const listed = await runCli(['user', 'list'], { env: location.cliEnv });
      expect(listed.code, listed.stderr).toBe(0);
      expect(notPrivate(location.dataDir)).toEqual([]);
    },
    CLI_TEST_MS,
  );
});
