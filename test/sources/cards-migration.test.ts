import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeyRing, type KeyRing } from '../../src/lib/crypto.ts';
import { luhnCheckDigit } from '../../src/modules/sources/common/cards/card-number.ts';
import { runCli } from '../support/cli.ts';
import { readRawStore, sourcesContaining } from '../support/raw-store.ts';
import { createTestApp } from '../support/test-app.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';
import { scaled } from '../support/wait.ts';

/**
 * Migration cards/0002_card_hash_key on a card store as the previous version wrote it (an 8-digit
 * IIN, digests keyed from secret.key alone), run by `dragnet migrate`; then `dragnet ingest`
 * of the same cards must still recognise them.
 */

const CLI_TEST_MS = scaled(180_000);

const panOf = (bin: string, serial: number, length = 16) => {
  const partial = bin + String(serial).padStart(length - 1 - bin.length, '0');
  return partial + luhnCheckDigit(partial);
};
const VISA = panOf('41472012', 5);
const AMEX = panOf('371241', 6, 15);
const DUMP_NAME = 'legacy-dump.txt';

interface CardRow {
  id: number;
  pan_hash: string;
  sighting_key: string;
  bin6: string;
  iin8_hash: string | null;
  last4: string;
  exp_month: number;
}

describe(`cards/0002: re-keying a card store of the previous version (${testEngine})`, () => {
  let location: TestStoreLocation;
  let env: Record<string, string>;
  let dir: string;
  let keys: KeyRing;
  /** The rows as the previous version wrote them. */
  const legacy: { pan_hash: string; sighting_key: string }[] = [];
  const dumpWith = (lines: string[]) => {
    writeFileSync(path.join(dir, DUMP_NAME), lines.join('\n'));
    return path.join(dir, DUMP_NAME);
  };
  /** The card rows, read through an app (which would apply a pending migration: only after `dragnet migrate`). */
  const readCards = async (): Promise<Record<string, unknown>[]> => {
    const t = await createTestApp({ location: { ...location, env } });
    try {
      return (await sql<Record<string, unknown>>`select * from cards order by id`.execute(t.container.store.db)).rows;
    } finally {
      await t.close();
    }
  };

  beforeAll(async () => {
    location = await createTestStoreLocation();
    env = { ...location.env, DRAGNET_SECRET_KEY: '' };
    dir = mkdtempSync(path.join(tmpdir(), 'dragnet-cards-0002-'));

    // A store at this version, turned back into what the previous one left: cards/0002 not
    // applied, the 8-digit IIN stored, pan_hash and sighting_key keyed from secret.key alone.
    const t = await createTestApp({ location: { ...location, env } });
    try {
      const readKey = (name: string) =>
        Buffer.from(readFileSync(path.join(location.dataDir, name), 'utf8').trim(), 'base64');
      keys = createKeyRing(readKey('secret.key'), readKey('card-hash.key'));
      const db = t.container.store.db;
      await sql`delete from kysely_migration where name = 'cards/0002_card_hash_key'`.execute(db);
      await sql`alter table cards drop column iin8_hash`.execute(db);
      await sql`alter table cards add column iin text not null default ''`.execute(db);
      for (const [pan, month] of [
        [VISA, 3],
        [AMEX, 4],
      ] as const) {
        const row = {
          sighting_key: keys.digest(`card-sighting:${pan}\n${month}/2031\n${DUMP_NAME}`),
          pan_hash: keys.digest(`pan:${pan}`),
        };
        legacy.push(row);
        await sql`insert into cards (sighting_key, pan_hash, bin6, iin, last4, pan_length, exp_month, exp_year, has_cvv, source_name, source_type, discovered_at)
          values (${row.sighting_key}, ${row.pan_hash}, ${pan.slice(0, 6)}, ${pan.slice(0, pan.length >= 16 ? 8 : 6)}, ${pan.slice(-4)}, ${pan.length}, ${month}, 2031, 1, ${DUMP_NAME}, 'dump', ${Date.now()})`.execute(
          db,
        );
      }
    } finally {
      await t.close();
    }
  }, scaled(60_000));
  afterAll(async () => {
    await location?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(
    'drops the 8-digit IIN, keys the digests again with card-hash.key, and a re-ingest still finds the same cards',
    async () => {
      // The previous version's store holds the 8-digit IIN, so the check below can fail.
      expect(sourcesContaining(await readRawStore(location), VISA.slice(0, 8))).not.toEqual([]);
      const migrated = await runCli(['--json', 'migrate'], { env, timeoutMs: CLI_TEST_MS - 30_000 });
      expect(migrated.code, migrated.stderr).toBe(0);
      expect(JSON.parse(migrated.stdout).applied).toEqual(['cards/0002_card_hash_key']);

      // SQLite: not even in freed space or the WAL (PostgreSQL keeps dead row versions until a
      // VACUUM FULL, docs/operations.md "Upgrading"; readRawStore reads only live rows there).
      if (testEngine === 'sqlite')
        expect(sourcesContaining(await readRawStore(location), VISA.slice(0, 8))).toEqual([]);

      const after = (await readCards()) as unknown as CardRow[];
      expect(Object.keys(after[0]!)).not.toContain('iin');
      expect(after.map((card) => card.bin6)).toEqual([VISA.slice(0, 6), AMEX.slice(0, 6)]);
      for (const [index, card] of after.entries()) {
        expect(card.pan_hash).toBe(keys.rekeyCardDigest(legacy[index]!.pan_hash));
        expect(card.sighting_key).toBe(keys.rekeyCardDigest(legacy[index]!.sighting_key));
      }
      expect(after.map((card) => card.iin8_hash)).toEqual([keys.cardDigest(`iin8:${VISA.slice(0, 8)}`), null]);

      // The same sightings are duplicates; a new expiry of the Visa is a new sighting of the same card.
      const dump = dumpWith([
        `${VISA}|03|31|123|Old Holder`,
        `${AMEX}|04|31|1234|Old Holder`,
        `${VISA}|05|32|123|Old Holder`,
      ]);
      const ingested = await runCli(['--json', 'ingest', 'credit_card', dump], {
        env,
        timeoutMs: CLI_TEST_MS - 30_000,
      });
      expect(ingested.code, ingested.stderr).toBe(0);
      expect(JSON.parse(ingested.stdout)).toMatchObject({ records: 3, added: 1, duplicates_skipped: 2 });
      const cards = (await readCards()) as unknown as CardRow[];
      expect(cards).toHaveLength(3);
      const fresh = cards.find((card) => Number(card.exp_month) === 5)!;
      expect(fresh.pan_hash).toBe(after[0]!.pan_hash);
      expect(fresh.iin8_hash).toBe(after[0]!.iin8_hash);
    },
    CLI_TEST_MS,
  );
});
