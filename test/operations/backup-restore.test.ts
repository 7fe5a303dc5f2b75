import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.ts';
import { runCli } from '../support/cli.ts';
import { startServer } from '../support/server-process.ts';
import { createTestApp } from '../support/test-app.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';
import { totpCode } from '../support/totp.ts';

/**
 * `dragnet backup` and `dragnet restore` as an operator runs them: the real CLI on a store that a
 * running app keeps open, a restore into a fresh data folder (SQLite) or a fresh database
 * (PostgreSQL), and the real server started on the restored store, where the data is found
 * again through the API. The suite runs once per engine.
 */

const CLI_TEST_MS = 240_000;
const PASSWORD = 'restore me 9 times please';
const EMAIL = 'soc@acme.example';
const TERM = 'zorbleck-7731';

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/**
 * A fresh store whose secret key lives in its data folder (`secret.key`), as in a default
 * embedded install: the backup must carry it, or the restored 2FA seeds could not be read.
 */
async function freshLocation(): Promise<TestStoreLocation & { cliEnv: Record<string, string> }> {
  const location = await createTestStoreLocation();
  cleanups.push(() => location.drop());
  return { ...location, cliEnv: { ...location.env, DRAGNET_SECRET_KEY: '' } };
}

const scratch = mkdtempSync(path.join(tmpdir(), 'dragnet-backup-'));
cleanups.push(() => rmSync(scratch, { recursive: true, force: true }));

async function cli(location: { cliEnv: Record<string, string> }, args: string[], input?: string) {
  return runCli(args, { env: location.cliEnv, input, timeoutMs: 120_000 });
}

async function expectCli(location: { cliEnv: Record<string, string> }, args: string[], input?: string): Promise<string> {
  const result = await cli(location, args, input);
  expect(result.code, `dragnet ${args.join(' ')}\n${result.stderr}${result.stdout}`).toBe(0);
  return result.stdout;
}

describe(`dragnet backup and restore (${testEngine})`, () => {
  it(
    'restores users, 2FA, messages and search history into a fresh store, where the server finds them again',
    async () => {
      const source = await freshLocation();
      await expectCli(source, ['user', 'create', '--org', 'Acme', '--email', EMAIL, '--password-stdin'], PASSWORD);
      const messages = path.join(scratch, 'messages.jsonl');
      writeFileSync(
        messages,
        JSON.stringify({ channel: { id: 4242, username: '@backup_channel', title: 'Backup Channel' }, message_id: 1, date: '2026-05-01T10:00:00Z', text: `selling access ${TERM} fresh` }) + '\n',
      );
      await expectCli(source, ['ingest', 'messenger', messages]);

      // An app holds the store open while the backup runs (an online backup): it enrols the user
      // in 2FA and runs a search, so the backup has a sealed TOTP seed and a search-history row.
      const clock = createManualClock(new Date());
      const app = await createTestApp({ location: { ...source, env: source.cliEnv }, clock });
      let seed: string;
      try {
        const first = await app.login(EMAIL, PASSWORD);
        seed = (await app.request({ method: 'POST', url: '/service/setup_2fa/', token: first.access, body: { password: PASSWORD } })).json().seed;
        const enrolled = await app.request({ method: 'POST', url: '/service/verify_2fa_enrollment/', token: first.access, body: { otp: totpCode(seed, clock.now()) } });
        expect(enrolled.statusCode, enrolled.body).toBe(200);
        // Enabling 2FA revoked the tokens issued before; the enrolment answered new ones.
        const { access } = enrolled.json() as { access: string };
        const search = await app.request({ method: 'POST', url: '/service/messenger-search-create/', token: access, body: { query: TERM } });
        expect(search.json().total).toBe(1);

        const archive = path.join(scratch, 'nested', 'dragnet.backup.tar');
        const backup = JSON.parse(await expectCli(source, ['--json', 'backup', archive]));
        expect(backup.engine).toBe(testEngine);
        expect(backup.files).toEqual(
          testEngine === 'sqlite' ? ['dragnet.sqlite', 'search-history.sqlite', 'secret.key'] : ['postgres.dump', 'secret.key'],
        );
        expect(existsSync(`${archive}.partial`)).toBe(false);

        const target = await freshLocation();
        const restored = JSON.parse(await expectCli(target, ['--json', 'restore', archive]));
        expect(restored.files).toEqual(backup.files);

        // The target now holds data: a second restore must be asked for.
        const again = await cli(target, ['restore', archive]);
        expect(again.code).toBe(4);
        expect(again.stderr).toMatch(/already holds data.*--force/);
        await expectCli(target, ['restore', '--force', archive]);

        const server = await startServer(target.cliEnv);
        try {
          const post = (url: string, body: unknown, token?: string) =>
            fetch(`${server.baseUrl}${url}`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
              body: JSON.stringify(body),
            });
          const withoutOtp = await post('/token/', { email: EMAIL, password: PASSWORD });
          expect((await withoutOtp.json()).code).toBe('otp_required');
          // The seed was sealed with the source's key: the code checks only if secret.key came along.
          const login = await post('/token/', { email: EMAIL, password: PASSWORD, otp: totpCode(seed, new Date(Date.now() + 30_000)) });
          expect(login.status).toBe(200);
          const { access } = (await login.json()) as { access: string };
          const found = await (await post('/service/messenger-search-create/', { query: TERM }, access)).json();
          expect(found.total).toBe(1);
          expect(found.results[0].text_preview).toContain(TERM);
          const history = await (await fetch(`${server.baseUrl}/service/messenger-search-history/`, { headers: { authorization: `Bearer ${access}` } })).json();
          expect(history.items.map((item: { query: string }) => item.query)).toContain(TERM);
        } finally {
          server.child.kill('SIGTERM');
          await server.exited;
        }
      } finally {
        await app.close();
      }
    },
    CLI_TEST_MS,
  );

  it(
    'refuses a file that is not a backup, and a backup that does not exist',
    async () => {
      const target = await freshLocation();
      const junk = path.join(scratch, 'junk.tar');
      writeFileSync(junk, 'not an archive at all');
      const notTar = await cli(target, ['restore', junk]);
      expect(notTar.code).toBe(1);
      expect(notTar.stderr).toMatch(/not a (readable backup archive|dragnet backup)/);
      expect((await cli(target, ['restore', path.join(scratch, 'missing.tar')])).code).toBe(3);
    },
    CLI_TEST_MS,
  );

  it.runIf(testEngine === 'postgres')(
    'refuses to restore a backup of the embedded store into PostgreSQL',
    async () => {
      const embedded = await createTestStoreLocation({ adminUrl: '' });
      cleanups.push(() => embedded.drop());
      const embeddedCli = { cliEnv: embedded.env };
      await expectCli(embeddedCli, ['user', 'create', '--org', 'Acme', '--email', EMAIL, '--password-stdin'], PASSWORD);
      const archive = path.join(scratch, 'embedded.tar');
      await expectCli(embeddedCli, ['backup', archive]);
      const refused = await cli(await freshLocation(), ['restore', archive]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/backup of the sqlite store, but this dragnet is configured for postgres/);
    },
    CLI_TEST_MS,
  );

  it.runIf(testEngine === 'sqlite')(
    'backup of a data folder without a store fails and writes nothing',
    async () => {
      const empty = await freshLocation();
      const archive = path.join(scratch, 'nothing.tar');
      const result = await cli(empty, ['backup', archive]);
      expect(result.code).toBe(3);
      expect(result.stderr).toMatch(/no store at/);
      expect(existsSync(archive)).toBe(false);
    },
    CLI_TEST_MS,
  );
});
