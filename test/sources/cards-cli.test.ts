import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql, type RawBuilder } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { luhnCheckDigit } from '../../src/modules/sources/common/cards/card-number.ts';
import { repoRoot, runCli, type CliResult } from '../support/cli.ts';
import { createTestApp } from '../support/test-app.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';
import { scaled } from '../support/wait.ts';

/**
 * `dragnet ingest credit_card` and `dragnet ingest bins` as a user runs them: the real CLI in a
 * child process on a fresh store. Cards are synthetic (Luhn-valid numbers on binlist BINs).
 */

// Each command is a fresh Node process (bin/dragnet.js on dist/): under a second each, seconds on a busy machine.
const CLI_TEST_MS = scaled(180_000);

const panOf = (bin: string, serial: number) => {
  const partial = bin + String(serial).padStart(15 - bin.length, '0');
  return partial + luhnCheckDigit(partial);
};
const CHASE = panOf('414720', 1);
const LANSING = panOf('510560', 2);
const BAD_LUHN = CHASE.slice(0, -1) + String((Number(CHASE.at(-1)) + 1) % 10);

describe(`dragnet ingest credit_card and bins (${testEngine})`, () => {
  let location: TestStoreLocation;
  let dir: string;
  const cli = (args: string[]): Promise<CliResult> =>
    runCli(args, { env: location.env, timeoutMs: CLI_TEST_MS - 30_000 });
  const file = (name: string, text: string) => {
    const target = path.join(dir, name);
    writeFileSync(target, text);
    return target;
  };
  /** Rows of the store, read through an app on the same location. */
  const query = async <T>(statement: RawBuilder<T>): Promise<T[]> => {
    const t = await createTestApp({ location });
    try {
      return (await statement.execute(t.container.store.db)).rows;
    } finally {
      await t.close();
    }
  };

  beforeAll(async () => {
    location = await createTestStoreLocation();
    dir = mkdtempSync(path.join(tmpdir(), 'dragnet-cards-cli-'));
  });
  afterAll(async () => {
    await location?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(
    'prints what it stored and each rejected line with its number, never a card number',
    async () => {
      const dump = file(
        'dump.txt',
        [
          `${CHASE}|03|30|958|Tess Holder`,
          `${BAD_LUHN}|03|30|958|Bad Luhn`,
          `${LANSING}|04/31|375`,
          `${CHASE.slice(0, 10)}|03|30`,
          `${LANSING}|00|31|375`,
        ].join('\n'),
      );
      const result = await cli(['ingest', 'credit_card', dump]);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout.trim().split('\n')).toEqual([
        '1 inputs (0 failed): 3 cards read, 3 added, 0 duplicates skipped, 2 rejected',
        `  warning: expiry not understood: 1 (stored as null; e.g. ${dump} line 5)`,
        `  rejected ${dump} line 2: card number fails the Luhn check`,
        `  rejected ${dump} line 4: card number must be 12 to 19 digits`,
      ]);
      for (const pan of [CHASE, LANSING, BAD_LUHN]) expect(result.stdout + result.stderr).not.toContain(pan);

      const again = await cli(['--json', 'ingest', 'credit_card', dump]);
      expect(JSON.parse(again.stdout)).toMatchObject({
        inputs: 1,
        failed: 0,
        records: 3,
        added: 0,
        duplicates_skipped: 3,
        rejected: 2,
      });
    },
    CLI_TEST_MS,
  );

  it(
    'ingest bins replaces the BIN table and re-enriches the stored cards; a bad table changes nothing',
    async () => {
      const before = await query(
        sql<{ prefix: string; bank_name: string }>`select prefix, bank_name from card_bins where prefix = '414720'`,
      );
      expect(before).toEqual([{ prefix: '414720', bank_name: 'CHASE' }]);

      const bins = file(
        'bins.csv',
        [
          'iin_start,iin_end,number_length,number_luhn,scheme,brand,type,prepaid,country,bank_name',
          '41472000,41472001,,,visa,,debit,,CA,TEST BANK OF CANADA',
          '510560,,,,mastercard,,debit,y,US,TEST PREPAID UNION',
          '4147,,,,visa,,,,,',
        ].join('\n'),
      );
      const result = await cli(['--json', 'ingest', 'bins', bins]);
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({
        inputs: 1,
        failed: 0,
        records: 2,
        added: 3,
        rejected: 1,
        replaced: true,
        prefixes: 3,
        // LANSING twice: once with its expiry, once with the expiry it could not read.
        cards_reenriched: 3,
        results: [{ rejections: [{ location: 'line 4', reason: 'iin_start must be 6 to 8 digits' }] }],
      });
      expect(await query(sql<{ prefix: string }>`select prefix from card_bins order by prefix`)).toEqual([
        { prefix: '41472000' },
        { prefix: '41472001' },
        { prefix: '510560' },
      ]);
      expect(
        await query(
          sql<{
            last4: string;
            issuer: string;
            country: string;
            card_type: string;
          }>`select distinct last4, issuer, country, card_type from cards order by last4`,
        ),
      ).toEqual(
        [
          { last4: CHASE.slice(-4), issuer: 'TEST BANK OF CANADA', country: 'CA', card_type: 'debit' },
          { last4: LANSING.slice(-4), issuer: 'TEST PREPAID UNION', country: 'US', card_type: 'prepaid' },
        ].sort((a, b) => a.last4.localeCompare(b.last4)),
      );

      const broken = await cli(['ingest', 'bins', file('broken.csv', 'bin,bank\n414720,X\n')]);
      expect(broken.code).toBe(1);
      expect(broken.stdout).toContain('error: ');
      expect(broken.stdout).toContain('the header row names no iin_start column');
      expect(broken.stdout).toContain('BIN table unchanged');
      expect(await query(sql<{ n: number }>`select count(*) as n from card_bins`)).toEqual([{ n: 3 }]);
    },
    CLI_TEST_MS,
  );

  it(
    'reads the card fixtures folder with each file in its own format, and track data from standard input',
    async () => {
      const fixtures = path.join(repoRoot, 'test/fixtures/credit_card');
      const folder = await cli(['--json', 'ingest', 'credit_card', fixtures]);
      expect(folder.code, folder.stderr).toBe(0);
      expect(JSON.parse(folder.stdout)).toMatchObject({
        failed: 0,
        records: 20,
        rejected: 0,
        warnings: [{ reason: 'expiry is ambiguous (day-first or month-first)', count: 1 }],
      });

      const track = `%B${CHASE}^HOLDER/TESS^3003101000000000000000123000000?\n`;
      const piped = await runCli(['ingest', 'credit_card', '-'], {
        env: location.env,
        input: track,
        timeoutMs: CLI_TEST_MS - 30_000,
      });
      expect(piped.code, piped.stderr).toBe(0);
      expect(piped.stdout).toContain('1 cards read, 1 added');
      expect(piped.stdout + piped.stderr).not.toContain(CHASE);
      expect(
        await query(
          sql<{
            holder: string;
            exp_month: number;
            source_name: string;
          }>`select holder, exp_month, source_name from cards where source_name = 'stdin'`,
        ),
      ).toEqual([{ holder: 'T. H.', exp_month: 3, source_name: 'stdin' }]);
    },
    CLI_TEST_MS,
  );
});
