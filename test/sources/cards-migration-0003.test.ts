import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { luhnCheckDigit } from '../../src/modules/sources/common/cards/card-number.ts';
import { runCli } from '../support/cli.ts';
import { createTestApp } from '../support/test-app.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';
import { scaled } from '../support/wait.ts';

/**
 * Migration cards/0003_card_expiry_extra on a card store of the previous version, run by
 * `dragnet migrate`: stored expiries stay, and afterwards a card whose expiry reads two ways is
 * stored with a null expiry and its other columns as extra.
 */

const CLI_TEST_MS = scaled(180_000);

const partial = '414720' + '000000007';
const VISA = partial + luhnCheckDigit(partial);

describe(`cards/0003: nullable expiry and extra columns (${testEngine})`, () => {
  let location: TestStoreLocation;
  let dir: string;
  const readCards = async () => {
    const t = await createTestApp({ location });
    try {
      return (
        await sql<{
          exp_month: number | null;
          exp_year: number | null;
          extra: string | null;
        }>`select exp_month, exp_year, extra from cards order by id`.execute(t.container.store.db)
      ).rows;
    } finally {
      await t.close();
    }
  };

  beforeAll(async () => {
    location = await createTestStoreLocation();
    dir = mkdtempSync(path.join(tmpdir(), 'dragnet-cards-0003-'));
    // A store at this version turned back into what the previous one left: no extra column,
    // cards/0003 not applied, a card with its expiry.
    const t = await createTestApp({ location });
    try {
      const db = t.container.store.db;
      await sql`delete from kysely_migration where name = 'cards/0003_card_expiry_extra'`.execute(db);
      await sql`alter table cards drop column extra`.execute(db);
      await sql`insert into cards (sighting_key, pan_hash, bin6, last4, pan_length, exp_month, exp_year, has_cvv, source_name, source_type, discovered_at)
        values ('k1', 'h1', '414720', '0001', 16, 3, 2031, 1, 'old-dump.txt', 'dump', ${Date.now()})`.execute(db);
    } finally {
      await t.close();
    }
  }, scaled(60_000));
  afterAll(async () => {
    await location?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(
    'keeps stored expiries; afterwards an ambiguous expiry is stored as null with the unknown columns as extra',
    async () => {
      const migrated = await runCli(['--json', 'migrate'], { env: location.env, timeoutMs: CLI_TEST_MS - 30_000 });
      expect(migrated.code, migrated.stderr).toBe(0);
      expect(JSON.parse(migrated.stdout).applied).toEqual(['cards/0003_card_expiry_extra']);
      expect(await readCards()).toEqual([{ exp_month: 3, exp_year: 2031, extra: null }]);

      const file = path.join(dir, 'orders.csv');
      writeFileSync(file, `card_number,expiry,order_ref\n${VISA},05/06/31,R-77\n`);
      const ingested = await runCli(['--json', 'ingest', 'credit_card', file], {
        env: location.env,
        timeoutMs: CLI_TEST_MS - 30_000,
      });
      expect(ingested.code, ingested.stderr).toBe(0);
      expect(JSON.parse(ingested.stdout)).toMatchObject({
        added: 1,
        warnings: [{ reason: 'expiry is ambiguous (day-first or month-first)', count: 1 }],
      });
      expect((await readCards())[1]).toEqual({
        exp_month: null,
        exp_year: null,
        extra: JSON.stringify({ order_ref: 'R-77' }),
      });
    },
    CLI_TEST_MS,
  );
});
