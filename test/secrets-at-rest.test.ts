import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import * as tar from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeyRing } from '../src/lib/crypto.ts';
import { luhnCheckDigit, luhnValid } from '../src/modules/sources/common/cards/card-number.ts';
import { ageDecrypt, createBackupKeyFile } from './support/backup-key.ts';
import { runCli } from './support/cli.ts';
import { deliveryApi, NO_RATE_LIMITS, senderBody, webhookBody } from './support/delivery-api.ts';
import { readRawStore, sourcesContaining, type RawChunk } from './support/raw-store.ts';
import { createTestApp, DEFAULT_PASSWORD, type TestApp } from './support/test-app.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from './support/test-store.ts';
import { seedBytes, totpCode } from './support/totp.ts';
import { scaled } from './support/wait.ts';

const run = promisify(execFile);

/** Every spelling a seed could be stored in: base32 either case, raw bytes, hex, base64. */
function seedSpellings(seed: string): (string | Buffer)[] {
  const raw = seedBytes(seed);
  return [
    seed,
    seed.toLowerCase(),
    seed.replace(/=+$/, ''),
    raw,
    raw.toString('hex'),
    raw.toString('base64'),
    raw.toString('base64url'),
  ];
}

describe(`secrets at rest (${testEngine})`, () => {
  let t: TestApp;
  let enrolledSeed: string;
  let pendingSeed: string;
  let backupCodes: string[];
  let passwordHashes: string[];
  /** The store as it is while the app runs (on SQLite that includes the write-ahead log). */
  let whileOpen: RawChunk[];
  /** The store after the app closed (on SQLite the log is then checkpointed into the file). */
  let afterClose: RawChunk[];

  beforeAll(async () => {
    t = await createTestApp();
    await t.createUser({ org: 'Acme', email: 'alice@acme.test' });
    await t.createUser({ org: 'Acme', email: 'bob@acme.test' });

    // alice finishes enrollment; bob only starts it, so a pending seed is stored too.
    const alice = await t.login('alice@acme.test');
    enrolledSeed = (
      await t.request({
        method: 'POST',
        url: '/service/setup_2fa/',
        token: alice.access,
        body: { password: DEFAULT_PASSWORD },
      })
    ).json().seed;
    const verified = await t.request({
      method: 'POST',
      url: '/service/verify_2fa_enrollment/',
      token: alice.access,
      body: { otp: totpCode(enrolledSeed, t.clock.now()) },
    });
    expect(verified.statusCode).toBe(200);
    backupCodes = verified.json().backup_codes;
    const bob = await t.login('bob@acme.test');
    pendingSeed = (
      await t.request({
        method: 'POST',
        url: '/service/setup_2fa/',
        token: bob.access,
        body: { password: DEFAULT_PASSWORD },
      })
    ).json().seed;

    const rows = await t.container.store.db.selectFrom('users').select('password_hash').execute();
    passwordHashes = rows.map((row) => row.password_hash);

    whileOpen = await readRawStore(t.location);
    await t.app.close();
    await t.container.close();
    afterClose = await readRawStore(t.location);
  });
  afterAll(() => t.location.drop());

  const snapshots = () =>
    [
      ['while the app runs', whileOpen],
      ['after it closed', afterClose],
    ] as const;

  it('the raw store is actually being read (the scan finds plain data)', () => {
    for (const [, chunks] of snapshots()) {
      expect(chunks.length).toBeGreaterThan(0);
      expect(sourcesContaining(chunks, 'alice@acme.test').length).toBeGreaterThan(0);
      expect(sourcesContaining(chunks, 'bob@acme.test').length).toBeGreaterThan(0);
    }
    if (testEngine === 'sqlite') {
      expect(afterClose.map((c) => c.source)).toContain('dragnet.sqlite');
      expect(whileOpen.map((c) => c.source)).toEqual(expect.arrayContaining(['dragnet.sqlite', 'dragnet.sqlite-wal']));
    } else {
      expect(afterClose.map((c) => c.source)).toEqual(
        expect.arrayContaining(['users', 'backup_codes', 'organizations']),
      );
    }
  });

  it('holds no TOTP seed, enrolled or pending, in any spelling', () => {
    for (const [when, chunks] of snapshots()) {
      for (const needle of [...seedSpellings(enrolledSeed), ...seedSpellings(pendingSeed)]) {
        expect(sourcesContaining(chunks, needle), `${when}: ${String(needle)}`).toEqual([]);
      }
    }
  });

  it('holds no backup code in the clear', () => {
    expect(backupCodes).toHaveLength(10);
    for (const [when, chunks] of snapshots()) {
      for (const code of backupCodes) {
        for (const needle of [code, code.replace(/-/g, ''), code.toLowerCase()]) {
          expect(sourcesContaining(chunks, needle), `${when}: ${needle}`).toEqual([]);
        }
      }
    }
  });

  it('holds no password in the clear, and password hashes are argon2id', () => {
    for (const [when, chunks] of snapshots()) {
      expect(sourcesContaining(chunks, DEFAULT_PASSWORD), when).toEqual([]);
    }
    expect(passwordHashes).toHaveLength(2);
    for (const hash of passwordHashes) expect(hash).toMatch(/^\$argon2id\$/);
  });
});

/** A Luhn-valid PAN on `bin` (synthetic cards on binlist BINs). */
const panOf = (bin: string, serial: number, length = 16) => {
  const partial = bin + String(serial).padStart(length - 1 - bin.length, '0');
  return partial + luhnCheckDigit(partial);
};

/**
 * The attack of the report: every PAN a stored card can be (its BIN, its last four, any middle
 * that passes the Luhn check), each tested against the stored digest with `digest`.
 */
function recoverPan(
  card: { bin6: string; last4: string; pan_length: number; pan_hash: string },
  digest: (value: string) => string,
): string[] {
  const middle = card.pan_length - 10;
  const found: string[] = [];
  for (let n = 0; n < 10 ** middle; n++) {
    const candidate = card.bin6 + String(n).padStart(middle, '0') + card.last4;
    if (luhnValid(candidate) && digest(`pan:${candidate}`) === card.pan_hash) found.push(candidate);
  }
  return found;
}

/** Every file below `folder`, as raw chunks named by their path. */
function filesBelow(folder: string): RawChunk[] {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .map((name) => path.join(folder, name))
    .filter((file) => statSync(file).isFile())
    .map((file) => ({ source: path.relative(folder, file), bytes: readFileSync(file) }));
}

describe(`secrets and cards in the store, a pg_dump and a backup (${testEngine})`, () => {
  // A 16-digit Visa and a 15-digit Amex: a million and a hundred thousand middles to try.
  const CARDS = [panOf('414720', 731), panOf('371241', 4242, 15)];
  let location: TestStoreLocation;
  let env: Record<string, string>;
  let scratch: string;
  const secrets: { name: string; needles: (string | Buffer)[] }[] = [];
  let cardRows: { bin6: string; last4: string; pan_length: number; pan_hash: string }[];
  let cardColumns: string[];
  /** Where each secret could be: the store while the app runs and after, a pg_dump, the backup file, its decrypted contents. */
  const places: [string, RawChunk[]][] = [];
  let backupSecretKey: Buffer;

  beforeAll(async () => {
    location = await createTestStoreLocation();
    // The keys in the data folder, as in a default install: the backup then carries secret.key.
    env = { ...location.env, DRAGNET_SECRET_KEY: '' };
    scratch = mkdtempSync(path.join(tmpdir(), 'dragnet-at-rest-'));
    const t = await createTestApp({ location: { ...location, env: { ...env, ...NO_RATE_LIMITS } } });
    try {
      const user = await t.createUser({ org: 'Acme', email: 'carol@acme.test' });
      const session = await t.login('carol@acme.test');
      const seed = (
        await t.request({
          method: 'POST',
          url: '/service/setup_2fa/',
          token: session.access,
          body: { password: DEFAULT_PASSWORD },
        })
      ).json().seed as string;
      const enrolled = await t.request({
        method: 'POST',
        url: '/service/verify_2fa_enrollment/',
        token: session.access,
        body: { otp: totpCode(seed, t.clock.now()) },
      });
      expect(enrolled.statusCode, enrolled.body).toBe(200);
      // Enrolment revokes earlier sessions and hands back a new one.
      const access = enrolled.json().access as string;
      secrets.push({ name: 'TOTP seed', needles: seedSpellings(seed) });

      const api = deliveryApi(t, access, user.org_id);
      const smtpPassword = 'smtp-pass-Zq83-at-rest';
      await api.created('sender', senderBody('alerts@acme.test', { password: smtpPassword }));
      secrets.push({ name: 'SMTP password', needles: [smtpPassword] });
      const webhook = await api.created('webhook', webhookBody('at rest'));
      const webhookSecret = webhook.secret as string;
      expect(webhookSecret).toMatch(/^whsec_/);
      const rawSecret = Buffer.from(webhookSecret.slice('whsec_'.length), 'base64');
      secrets.push({
        name: 'webhook secret',
        needles: [webhookSecret, webhookSecret.slice('whsec_'.length), rawSecret, rawSecret.toString('hex')],
      });

      const dump = path.join(scratch, 'cards.txt');
      writeFileSync(dump, CARDS.map((pan, i) => `${pan}|0${i + 3}|31|95${i}|Card Holder`).join('\n'));
      const ingested = await runCli(['ingest', 'credit_card', dump], { env });
      expect(ingested.code, ingested.stderr).toBe(0);
      secrets.push(...CARDS.map((pan) => ({ name: `card ${pan}`, needles: [pan] })));

      const { rows } = await sql<Record<string, unknown>>`select * from cards`.execute(t.container.store.db);
      cardColumns = Object.keys(rows[0]!);
      cardRows = rows.map((row) => ({
        bin6: String(row.bin6),
        last4: String(row.last4),
        pan_length: Number(row.pan_length),
        pan_hash: String(row.pan_hash),
      }));
      places.push(['the store while the app runs', await readRawStore(location)]);
    } finally {
      await t.close();
    }
    places.push(['the store after the app closed', await readRawStore(location)]);
    if (location.databaseUrl) {
      const { stdout } = await run('pg_dump', [`--dbname=${location.databaseUrl}`], { maxBuffer: 256 * 1024 * 1024 });
      places.push(['a pg_dump', [{ source: 'pg_dump', bytes: Buffer.from(stdout) }]]);
    }

    const key = await createBackupKeyFile(scratch);
    const archive = path.join(scratch, 'backup.age');
    const backup = await runCli(['backup', '--key-file', key.file, archive], { env });
    expect(backup.code, backup.stderr).toBe(0);
    const sealed = readFileSync(archive);
    places.push(['the backup file', [{ source: 'backup.age', bytes: sealed }]]);
    // What anyone holding the backup and its key reads: the archive and every file in it.
    const opened = path.join(scratch, 'opened');
    mkdirSync(opened);
    writeFileSync(path.join(scratch, 'backup.tar'), await ageDecrypt(sealed, key.identity));
    await tar.x({ file: path.join(scratch, 'backup.tar'), cwd: opened });
    const contents = [
      { source: 'backup.tar', bytes: readFileSync(path.join(scratch, 'backup.tar')) },
      ...filesBelow(opened),
    ];
    if (location.databaseUrl) {
      // The dump in the archive is compressed: read it as pg_restore writes it out.
      const { stdout } = await run('pg_restore', ['--file=-', path.join(opened, 'postgres.dump')], {
        maxBuffer: 256 * 1024 * 1024,
      });
      contents.push({ source: 'postgres.dump as SQL', bytes: Buffer.from(stdout) });
    }
    places.push(['the decrypted backup', contents]);
    backupSecretKey = Buffer.from(readFileSync(path.join(opened, 'secret.key'), 'utf8').trim(), 'base64');
  }, scaled(120_000));
  afterAll(async () => {
    await location?.drop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it("the scan reads real bytes: the store and the decrypted backup hold the user and the cards' last four", () => {
    for (const [where, chunks] of places.filter(([where]) => where !== 'the backup file')) {
      expect(sourcesContaining(chunks, 'carol@acme.test').length, where).toBeGreaterThan(0);
    }
    expect(cardRows.map((card) => card.last4).sort()).toEqual(CARDS.map((pan) => pan.slice(-4)).sort());
  });

  it('holds no SMTP password, webhook secret, TOTP seed or full card number in any of them', () => {
    for (const [where, chunks] of places) {
      for (const { name, needles } of secrets) {
        for (const needle of needles)
          expect(sourcesContaining(chunks, needle), `${where}: ${name} (${String(needle)})`).toEqual([]);
      }
    }
  });

  it('keeps 6 + 4 digits of a card, and leaves card-hash.key out of the backup', () => {
    expect(cardColumns).not.toContain('iin');
    for (const card of cardRows) {
      expect(card.bin6).toMatch(/^\d{6}$/);
      expect(card.last4).toMatch(/^\d{4}$/);
    }
    const [, decrypted] = places.find(([where]) => where === 'the decrypted backup')!;
    expect(decrypted.map((chunk) => chunk.source)).toContain('secret.key');
    expect(decrypted.map((chunk) => chunk.source)).not.toContain('card-hash.key');
    const cardHashKey = readFileSync(path.join(location.dataDir, 'card-hash.key'));
    for (const [where, chunks] of places.filter(([where]) => !where.startsWith('the store'))) {
      expect(sourcesContaining(chunks, cardHashKey.toString('utf8').trim()), where).toEqual([]);
    }
  });

  it('a card number cannot be recovered from the store and its backup: secret.key alone confirms no candidate', () => {
    // The attacker has the backup's secret.key, not card-hash.key (the second argument is unused here).
    const withBackup = createKeyRing(backupSecretKey, Buffer.alloc(32));
    for (const card of cardRows) expect(recoverPan(card, withBackup.digest), `${card.bin6}…${card.last4}`).toEqual([]);
    // The same search with the data folder's card-hash.key finds each card: the search works.
    const cardHashKey = Buffer.from(
      readFileSync(path.join(location.dataDir, 'card-hash.key'), 'utf8').trim(),
      'base64',
    );
    const withDataFolder = createKeyRing(backupSecretKey, cardHashKey);
    expect(
      cardRows
        .map((card) => recoverPan(card, withDataFolder.cardDigest))
        .flat()
        .sort(),
    ).toEqual([...CARDS].sort());
  });
});
