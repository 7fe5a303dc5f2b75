import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as tar from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.ts';
import {
  ageDecrypt,
  ageEncrypt,
  createBackupKeyFile,
  createKeysInDataFolderLocation,
  type BackupKeyFile,
} from '../support/backup-key.ts';
import { runCli } from '../support/cli.ts';
import { startServer } from '../support/server-process.ts';
import { createTestApp } from '../support/test-app.ts';
import { createTestStoreLocation, testEngine } from '../support/test-store.ts';
import { totpCode } from '../support/totp.ts';
import { scaled } from '../support/wait.ts';

/**
 * `dragnet backup` and `dragnet restore` as an operator runs them: the real CLI on a store that a
 * running app keeps open, a restore into a fresh data folder (SQLite) or a fresh database
 * (PostgreSQL), and the real server started on the restored store, where the data is found
 * again through the API. The suite runs once per engine.
 */

const CLI_TEST_MS = scaled(240_000);
const PASSWORD = 'restore me 9 times please';
const EMAIL = 'soc@acme.example';
const TERM = 'zorbleck-7731';

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

// Keys in the data folder: the backup must carry secret.key, or the restored 2FA seeds could not be read.
const freshLocation = createKeysInDataFolderLocation;

const scratch = mkdtempSync(path.join(tmpdir(), 'dragnet-backup-'));
cleanups.push(() => rmSync(scratch, { recursive: true, force: true }));

let key: BackupKeyFile;
let keyArgs: string[];
beforeAll(async () => {
  key = await createBackupKeyFile(scratch);
  keyArgs = ['--key-file', key.file];
});

/** The names a tar archive holds, and each entry's type. */
async function tarEntries(archive: Buffer): Promise<string[]> {
  const file = path.join(mkdtempSync(path.join(scratch, 'list-')), 'archive.tar');
  writeFileSync(file, archive);
  const entries: string[] = [];
  await tar.t({ file, onReadEntry: (entry) => entries.push(entry.path) });
  return entries;
}

interface HostileEntry {
  path: string;
  type: 'File' | 'Link' | 'SymbolicLink' | 'CharacterDevice';
  body?: string;
  linkpath?: string;
}

/** A tar archive written header by header, so it can hold what no honest backup does. */
function hostileTar(entries: HostileEntry[]): Buffer {
  const blocks = entries.flatMap(({ path: name, type, body = '', linkpath }) => {
    const header = Buffer.alloc(512);
    new tar.Header({
      path: name,
      type,
      linkpath,
      size: Buffer.byteLength(body),
      mode: 0o600,
      mtime: new Date(),
    }).encode(header, 0);
    const data = Buffer.alloc(Math.ceil(Buffer.byteLength(body) / 512) * 512);
    data.write(body);
    return [header, data];
  });
  return Buffer.concat([...blocks, Buffer.alloc(1024)]);
}

/** What the data folder holds besides what every dragnet start makes: a failed restore must leave nothing (no staging folder). */
const leftovers = (dataDir: string) =>
  readdirSync(dataDir).filter((name) => !['secret.key', 'card-hash.key'].includes(name));

async function cli(location: { cliEnv: Record<string, string> }, args: string[], input?: string) {
  return runCli(args, { env: location.cliEnv, input, timeoutMs: scaled(120_000) });
}

async function expectCli(
  location: { cliEnv: Record<string, string> },
  args: string[],
  input?: string,
): Promise<string> {
  const result = await cli(location, args, input);
  expect(result.code, `dragnet ${args.join(' ')}\n${result.stderr}${result.stdout}`).toBe(0);
  return result.stdout;
}

/** A fresh location with one user, made by the CLI. */
async function locationWithUser() {
  const location = await freshLocation();
  await expectCli(location, ['user', 'create', '--org', 'Acme', '--email', EMAIL, '--password-stdin'], PASSWORD);
  return location;
}

const userEmails = async (location: { cliEnv: Record<string, string> }): Promise<string[]> =>
  JSON.parse(await expectCli(location, ['--json', 'user', 'list'])).map((user: { email: string }) => user.email);

describe(`dragnet backup and restore (${testEngine})`, () => {
  it(
    'restores users, 2FA, messages and search history into a fresh store, where the server finds them again',
    async () => {
      const source = await locationWithUser();
      const messages = path.join(scratch, 'messages.jsonl');
      writeFileSync(
        messages,
        JSON.stringify({
          channel: { id: 4242, username: '@backup_channel', title: 'Backup Channel' },
          message_id: 1,
          date: '2026-05-01T10:00:00Z',
          text: `selling access ${TERM} fresh`,
        }) + '\n',
      );
      await expectCli(source, ['ingest', 'messenger', messages]);

      // An app holds the store open while the backup runs (an online backup): it enrols the user
      // in 2FA and runs a search, so the backup has a sealed TOTP seed and a search-history row.
      const clock = createManualClock(new Date());
      const app = await createTestApp({ location: { ...source, env: source.cliEnv }, clock });
      let seed: string;
      try {
        const first = await app.login(EMAIL, PASSWORD);
        seed = (
          await app.request({
            method: 'POST',
            url: '/service/setup_2fa/',
            token: first.access,
            body: { password: PASSWORD },
          })
        ).json().seed;
        const enrolled = await app.request({
          method: 'POST',
          url: '/service/verify_2fa_enrollment/',
          token: first.access,
          body: { otp: totpCode(seed, clock.now()) },
        });
        expect(enrolled.statusCode, enrolled.body).toBe(200);
        // Enabling 2FA revoked the tokens issued before; the enrolment answered new ones.
        const { access } = enrolled.json() as { access: string };
        const search = await app.request({
          method: 'POST',
          url: '/service/messenger-search-create/',
          token: access,
          body: { query: TERM },
        });
        expect(search.json().total).toBe(1);

        const archive = path.join(scratch, 'nested', 'dragnet.backup.age');
        const backup = JSON.parse(await expectCli(source, ['--json', 'backup', ...keyArgs, archive]));
        expect(backup.engine).toBe(testEngine);
        expect(backup.files).toEqual(
          testEngine === 'sqlite'
            ? ['dragnet.sqlite', 'search-history.sqlite', 'secret.key']
            : ['postgres.dump', 'secret.key'],
        );
        expect(existsSync(`${archive}.partial`)).toBe(false);

        const target = await freshLocation();
        const restored = JSON.parse(await expectCli(target, ['--json', 'restore', ...keyArgs, archive]));
        expect(restored.files).toEqual(backup.files);

        // The target now holds data: a second restore must be asked for.
        const again = await cli(target, ['restore', ...keyArgs, archive]);
        expect(again.code).toBe(4);
        expect(again.stderr).toMatch(/already holds data.*--force/);
        await expectCli(target, ['restore', '--force', ...keyArgs, archive]);

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
          const login = await post('/token/', {
            email: EMAIL,
            password: PASSWORD,
            otp: totpCode(seed, new Date(Date.now() + 30_000)),
          });
          expect(login.status).toBe(200);
          const { access } = (await login.json()) as { access: string };
          const found = await (await post('/service/messenger-search-create/', { query: TERM }, access)).json();
          expect(found.total).toBe(1);
          expect(found.results[0].text_preview).toContain(TERM);
          const history = await (
            await fetch(`${server.baseUrl}/service/messenger-search-history/`, {
              headers: { authorization: `Bearer ${access}` },
            })
          ).json();
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
      const notAge = await cli(target, ['restore', ...keyArgs, junk]);
      expect(notAge.code).toBe(1);
      expect(notAge.stderr).toMatch(/is not an encrypted dragnet backup \(an age file\)/);
      const encryptedJunk = path.join(scratch, 'junk.age');
      writeFileSync(encryptedJunk, await ageEncrypt(Buffer.from('not an archive at all'), key.recipient));
      const notTar = await cli(target, ['restore', ...keyArgs, encryptedJunk]);
      expect(notTar.code).toBe(1);
      expect(notTar.stderr).toMatch(/not a (readable backup archive|dragnet backup)/);
      expect(leftovers(target.dataDir)).toEqual([]);
      expect((await cli(target, ['restore', ...keyArgs, path.join(scratch, 'missing.tar')])).code).toBe(3);
    },
    CLI_TEST_MS,
  );

  it(
    'writes an owner-only age file that age decrypts with the key file, without card-hash.key (a restore warns of a different one); no key, no backup',
    async () => {
      const source = await locationWithUser();
      const leak = path.join(scratch, 'raw-leak.txt');
      writeFileSync(leak, `${EMAIL}:raw-leak-line\n`);
      await expectCli(source, ['ingest', 'raw_leak_extended', leak]);
      const [rawLeakFile] = readdirSync(path.join(source.dataDir, 'raw-leaks'));

      const unkeyed = path.join(scratch, 'unkeyed.age');
      const refused = await cli(source, ['backup', unkeyed]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/backups are encrypted: give --key-file/);
      expect(existsSync(unkeyed)).toBe(false);

      // An older backup at the same name, readable by everyone: the new one replaces it owner-only.
      const archive = path.join(scratch, 'owner-only.age');
      writeFileSync(archive, 'an old backup', { mode: 0o644 });
      await expectCli(source, ['backup', ...keyArgs, archive]);
      expect(statSync(archive).mode & 0o777).toBe(0o600);
      const sealed = readFileSync(archive);
      expect(sealed.subarray(0, 22).toString()).toBe('age-encryption.org/v1\n');
      expect(sealed.includes(EMAIL)).toBe(false);
      const entries = await tarEntries(await ageDecrypt(sealed, key.identity));
      expect(entries).toEqual(expect.arrayContaining(['manifest.json', 'secret.key', `raw-leaks/${rawLeakFile}`]));
      expect(existsSync(path.join(source.dataDir, 'card-hash.key'))).toBe(true);
      expect(entries).not.toContain('card-hash.key');

      // A backup host may hold only the public half (age1…); a restore needs the identity.
      const publicOnly = path.join(scratch, 'recipient.txt');
      writeFileSync(publicOnly, `# public key\n${key.recipient}\n`);
      const toRecipient = path.join(scratch, 'to-recipient.age');
      await expectCli(source, ['backup', '--key-file', publicOnly, toRecipient]);
      const target = await freshLocation();
      const noIdentity = await cli(target, ['restore', '--key-file', publicOnly, toRecipient]);
      expect(noIdentity.code).toBe(1);
      expect(noIdentity.stderr).toMatch(/holds only recipients \(age1…\): a restore needs the identity/);
      // A new machine has a new card hash key: the restore says so; with the old one copied first, it does not.
      const elsewhere = await cli(target, ['--json', 'restore', ...keyArgs, toRecipient]);
      expect(elsewhere.code, elsewhere.stderr).toBe(0);
      expect(JSON.parse(elsewhere.stdout).card_key).toBe('different');
      expect(elsewhere.stderr).toMatch(
        /warning: this data folder's card hash key .* is not the one the backup's cards were stored with/,
      );
      const withCardKey = await freshLocation();
      copyFileSync(path.join(source.dataDir, 'card-hash.key'), path.join(withCardKey.dataDir, 'card-hash.key'));
      const same = await cli(withCardKey, ['--json', 'restore', ...keyArgs, toRecipient]);
      expect(JSON.parse(same.stdout).card_key).toBe('same');
      expect(same.stderr).not.toMatch(/warning/);
      expect(readFileSync(path.join(target.dataDir, 'raw-leaks', rawLeakFile!), 'utf8')).toContain('raw-leak-line');
      expect(await userEmails(target)).toEqual([EMAIL]);
    },
    CLI_TEST_MS,
  );

  it(
    'a passphrase backup: a short or doubly given passphrase is refused, a wrong one fails clearly and leaves nothing behind',
    async () => {
      const source = await locationWithUser();
      const archive = path.join(scratch, 'passphrase.age');
      const short = await cli(source, ['backup', '--passphrase-stdin', archive], 'too short\n');
      expect(short.code).toBe(1);
      expect(short.stderr).toMatch(/passphrase must be at least 12 characters/);
      const both = await cli(
        source,
        ['backup', '--passphrase-stdin', ...keyArgs, archive],
        'a long enough passphrase\n',
      );
      expect(both.code).toBe(1);
      expect(both.stderr).toMatch(/give one of --key-file, --passphrase-stdin/);
      expect(existsSync(archive)).toBe(false);

      const passphraseFile = path.join(scratch, 'passphrase.txt');
      writeFileSync(passphraseFile, 'correct staple battery horse\n');
      await expectCli(source, ['backup', '--passphrase-file', passphraseFile, archive]);

      const target = await freshLocation();
      const wrong = await cli(target, ['restore', '--passphrase-stdin', archive], 'incorrect staple battery horse\n');
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toMatch(/cannot be decrypted with this passphrase/);
      expect(leftovers(target.dataDir)).toEqual([]);
      expect(await userEmails(target)).toEqual([]);

      await expectCli(target, ['restore', '--force', '--passphrase-stdin', archive], 'correct staple battery horse\n');
      expect(await userEmails(target)).toEqual([EMAIL]);
    },
    CLI_TEST_MS,
  );

  it(
    'refuses a hostile archive: links, devices, absolute and .. paths are named, the staging folder goes, nothing is written outside',
    async () => {
      const manifest = JSON.stringify({
        format: 'dragnet-backup',
        version: 1,
        engine: testEngine,
        created_at: new Date().toISOString(),
        files: ['secret.key'],
      });
      const outside = path.join(scratch, 'outside');
      mkdirSync(outside, { recursive: true });
      const cases: { entry: HostileEntry; reason: RegExp }[] = [
        { entry: { path: 'secret.key', type: 'Link', linkpath: '/etc/passwd' }, reason: /a Link entry/ },
        { entry: { path: 'secret.key', type: 'Link', linkpath: 'manifest.json' }, reason: /a Link entry/ },
        { entry: { path: 'raw-leaks', type: 'SymbolicLink', linkpath: outside }, reason: /a SymbolicLink entry/ },
        { entry: { path: 'secret.key', type: 'CharacterDevice' }, reason: /a CharacterDevice entry/ },
        { entry: { path: path.join(outside, 'absolute'), type: 'File', body: 'planted' }, reason: /an absolute path/ },
        { entry: { path: '../../planted', type: 'File', body: 'planted' }, reason: /a path with '\.\.'/ },
        { entry: { path: 'raw-leaks/../../planted', type: 'File', body: 'planted' }, reason: /a path with '\.\.'/ },
        {
          entry: { path: 'authorized_keys', type: 'File', body: 'planted' },
          reason: /not a file a dragnet backup holds/,
        },
      ];
      const target = await freshLocation();
      for (const [index, { entry, reason }] of cases.entries()) {
        const archive = path.join(scratch, `hostile-${index}.age`);
        writeFileSync(
          archive,
          await ageEncrypt(hostileTar([{ path: 'manifest.json', type: 'File', body: manifest }, entry]), key.recipient),
        );
        const result = await cli(target, ['restore', ...keyArgs, archive]);
        expect(result.code, result.stderr).toBe(1);
        expect(result.stderr).toContain(`holds a refused entry "${entry.path}"`);
        expect(result.stderr).toMatch(reason);
        expect(leftovers(target.dataDir), entry.path).toEqual([]);
      }
      expect(readdirSync(outside)).toEqual([]);
      expect(existsSync(path.join(path.dirname(target.dataDir), 'planted'))).toBe(false);
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
      const archive = path.join(scratch, 'embedded.age');
      await expectCli(embeddedCli, ['backup', ...keyArgs, archive]);
      const refused = await cli(await freshLocation(), ['restore', ...keyArgs, archive]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/backup of the sqlite store, but this dragnet is configured for postgres/);
    },
    CLI_TEST_MS,
  );

  it.runIf(testEngine === 'sqlite')(
    'backup of a data folder without a store fails and writes nothing',
    async () => {
      const empty = await freshLocation();
      const archive = path.join(scratch, 'nothing.age');
      const result = await cli(empty, ['backup', ...keyArgs, archive]);
      expect(result.code).toBe(3);
      expect(result.stderr).toMatch(/no store at/);
      expect(existsSync(archive)).toBe(false);
    },
    CLI_TEST_MS,
  );
});
