import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRawStore, sourcesContaining, type RawChunk } from './support/raw-store.ts';
import { createTestApp, DEFAULT_PASSWORD, type TestApp } from './support/test-app.ts';
import { testEngine } from './support/test-store.ts';
import { seedBytes, totpCode } from './support/totp.ts';

/** Every spelling a seed could be stored in: base32 either case, raw bytes, hex, base64. */
function seedSpellings(seed: string): (string | Buffer)[] {
  const raw = seedBytes(seed);
  return [seed, seed.toLowerCase(), seed.replace(/=+$/, ''), raw, raw.toString('hex'), raw.toString('base64'), raw.toString('base64url')];
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
    enrolledSeed = (await t.request({ method: 'POST', url: '/service/setup_2fa/', token: alice.access, body: { password: DEFAULT_PASSWORD } })).json().seed;
    const verified = await t.request({
      method: 'POST',
      url: '/service/verify_2fa_enrollment/',
      token: alice.access,
      body: { otp: totpCode(enrolledSeed, t.clock.now()) },
    });
    expect(verified.statusCode).toBe(200);
    backupCodes = verified.json().backup_codes;
    const bob = await t.login('bob@acme.test');
    pendingSeed = (await t.request({ method: 'POST', url: '/service/setup_2fa/', token: bob.access, body: { password: DEFAULT_PASSWORD } })).json().seed;

    const rows = await t.container.store.db.selectFrom('users').select('password_hash').execute();
    passwordHashes = rows.map((row) => row.password_hash);

    whileOpen = await readRawStore(t.location);
    await t.app.close();
    await t.container.close();
    afterClose = await readRawStore(t.location);
  });
  afterAll(() => t.location.drop());

  const snapshots = () => [
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
      expect(afterClose.map((c) => c.source)).toEqual(expect.arrayContaining(['users', 'backup_codes', 'organizations']));
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
