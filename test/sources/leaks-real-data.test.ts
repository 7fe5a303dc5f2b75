import {
  cpSync,
  createWriteStream,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import yazl from 'yazl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import {
  createDeliveryKit,
  createRulesApp,
  ingestInto,
  rulesUser,
  sourceRule,
  type DeliveryKit,
  type HitView,
  type RulesApi,
} from '../support/rules-api.ts';
import type { TestApp } from '../support/test-app.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';
import { scaled } from '../support/wait.ts';

/**
 * Stealer logs and combolists in the layouts the stealer families and combolist sellers publish
 * (test/fixtures/filtered_leak: one machine folder per family, values made up): every family's
 * system file gives country, OS, HWID and date, the machine folder is kept, a date that cannot
 * be read unambiguously is null with a warning, and an android:// login has no domain.
 */
const FIXTURES = path.join(import.meta.dirname, '..', 'fixtures', 'filtered_leak');
const LOGS = path.join(FIXTURES, 'stealer-logs');

interface Summary {
  failed: number;
  records: number;
  added: number;
  rejected: number;
  warnings: { reason: string; count: number; examples: string[] }[];
  results: { ok: boolean; error?: string }[];
}

async function zipFolder(folder: string, zipPath: string): Promise<void> {
  const zip = new yazl.ZipFile();
  const add = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      const full = path.join(dir, entry);
      if (statSync(full).isDirectory()) add(full);
      else zip.addBuffer(readFileSync(full), path.relative(folder, full).split(path.sep).join('/'));
    }
  };
  add(folder);
  zip.end();
  const out = createWriteStream(zipPath);
  zip.outputStream.pipe(out);
  await once(out, 'close');
}

describe(`stealer logs and combolists as published (${testEngine})`, () => {
  let t: TestApp;
  let alice: RulesApi;
  let kit: DeliveryKit;
  let dir: string;

  beforeAll(async () => {
    t = await createRulesApp();
    alice = await rulesUser(t, 'Contoso', 'alice@contoso.test');
    kit = await createDeliveryKit(alice, { tag: 'leaks-real' });
    dir = mkdtempSync(path.join(tmpdir(), 'dragnet-leaks-real-'));
  });
  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const hitsOf = async (args: Record<string, unknown>): Promise<HitView[]> => {
    const rule = await alice.created(sourceRule(kit, `rule ${JSON.stringify(args)}`, 3, args));
    const [match] = (await alice.matches(rule.id)).results;
    return (await alice.hits(match!.id, { page_size: 100, sort: 'email' })).results;
  };

  it('reads every family’s machine: country, OS, HWID, log date and machine folder; warns for the ambiguous date', async () => {
    const summary = (await ingestInto(t, 'filtered_leak', [LOGS])) as unknown as Summary;
    expect(summary).toMatchObject({ failed: 0, records: 9, added: 9, rejected: 0 });
    expect(summary.warnings).toEqual([
      {
        reason: 'log date is ambiguous (day-first or month-first)',
        count: 1,
        examples: [`${LOGS} CA_0A1B2C3D4E5F_2025_06/UserInformation.txt line 5`],
      },
    ]);

    const hits = await hitsOf({ domain_url: 'contoso-demo.com', filter_id: 4 });
    const byLogin = Object.fromEntries(hits.map((hit) => [hit.email ?? hit.username, hit]));
    const machine = (login: string) => {
      const hit = byLogin[login]!;
      return [hit.leak_name, hit.machine, hit.country, hit.os, hit.hwid, hit.leaked_at];
    };
    expect(machine('j.doe@contoso-demo.com')).toEqual([
      'stealer-logs',
      'US[8F3C2A1B9D4E07A6C5B2]  [2025-07-30T13_42_43.4418890+02_00]',
      'US',
      'Windows 10 Pro x64',
      '8F3C2A1B9D4E07A6C5B2',
      '2025-07-30T13:42:43.000Z',
    ]);
    expect(machine('m.muster@contoso-demo.com')).toEqual([
      'stealer-logs',
      'DE_7A1F0C2E5B3D9A84_2025_07_29',
      null,
      'Windows 10 Pro [x64]',
      '7A1F0C2E5B3D9A84-5f3a9c1e',
      '2025-07-29T09:15:02.000Z',
    ]);
    expect(machine('claire.b@contoso-demo.com')).toEqual([
      'stealer-logs',
      '[FR]203.0.113.7_C4D9E2F1A0B7',
      'FR',
      'Windows 11 Pro',
      'C4D9E2F1A0B70C4D9E2F1A0B70',
      '2025-07-28T08:05:09.000Z',
    ]);
    // Lumma: a passwords file nested under the machine folder; Install Date is not the log date.
    expect(machine('tomek.k@mailbox-demo.org')).toEqual([
      'stealer-logs',
      'PL_5E9B1C77D0A24F31A8C3',
      'PL',
      'Windows 11 Home (10.0.22631) x64',
      '5E9B1C77D0A24F31A8C3',
      '2025-07-30T06:01:44.000Z',
    ]);
    expect(machine('webmaster')).toEqual([
      'stealer-logs',
      'AMOS_mac_9C2E4F1B',
      null,
      'macOS 14.5',
      '9C2E4F1B-6A3D-5B7E-8C1F-2D4A6B8C0E1F',
      null,
    ]);
    expect(machine('pat@contoso-demo.com')).toEqual([
      'stealer-logs',
      'CA_0A1B2C3D4E5F_2025_06',
      'CA',
      'Windows 10 Home x64',
      '0A1B2C3D4E5F',
      null,
    ]);

    // Filterable by the machine's HWID.
    const rule = await alice.created(
      sourceRule(kit, 'one machine', 3, { domain_url: 'contoso-demo.com', filter_id: 4 }),
    );
    const [match] = (await alice.matches(rule.id)).results;
    const oneMachine = (await alice.hits(match!.id, { filter: 'hwid:8F3C2A1B9D4E07A6C5B2' })).results;
    expect(oneMachine.map((hit) => hit.url)).toEqual(['https://vpn.contoso-demo.com/remote/login']);
  });

  it('gives an android:// login its app id and no domain, in a stealer log and in a combolist', async () => {
    const summary = (await ingestInto(t, 'filtered_leak', [
      path.join(FIXTURES, 'combolist.txt'),
    ])) as unknown as Summary;
    expect(summary).toMatchObject({ failed: 0, records: 4, added: 4, rejected: 0 });
    const { rows } = await sql<{ login: string; host: string | null; domain: string | null; app_id: string | null }>`
      select login, host, domain, app_id from leak_credentials where url like 'android://%' order by login`.execute(
      t.container.store.db,
    );
    expect(rows).toEqual([
      { login: 'j.doe@contoso-demo.com', host: null, domain: null, app_id: 'com.contoso.mobile' },
      { login: 'wallet.user@contoso-demo.com', host: null, domain: null, app_id: 'com.contoso.wallet' },
    ]);
    // Still found by the login's domain, with the app id in the hit.
    const hits = await hitsOf({ domain_url: 'contoso-demo.com', filter_id: 1 });
    expect(hits.filter((hit) => hit.app_id).map((hit) => [hit.email, hit.app_id, hit.domain])).toEqual([
      ['j.doe@contoso-demo.com', 'com.contoso.mobile', null],
      ['wallet.user@contoso-demo.com', 'com.contoso.wallet', null],
    ]);
  });

  it('auto tells a passwords file from a combolist by content, reads a zip of machines, and refuses a file in neither format', async () => {
    const renamed = path.join(dir, 'dump-0730.txt');
    cpSync(path.join(LOGS, '[FR]203.0.113.7_C4D9E2F1A0B7', 'passwords.txt'), renamed);
    writeFileSync(
      renamed,
      `${readFileSync(renamed, 'utf8')}\nurl: https://extra.contoso-demo.com/\nlogin: extra.user\npassword: Extra-1\n`,
    );
    expect(await ingestInto(t, 'filtered_leak', [renamed])).toMatchObject({
      failed: 0,
      records: 2,
      added: 2,
      rejected: 0,
    });
    const { rows } = await sql<{
      kind: string;
    }>`select l.kind from leak_credentials c join leak_files l on l.id = c.leak_id where c.login = 'extra.user'`.execute(
      t.container.store.db,
    );
    expect(rows).toEqual([{ kind: 'stealer_log' }]);

    const zipPath = path.join(dir, 'cloud-logs.zip');
    await zipFolder(LOGS, zipPath);
    const zipped = (await ingestInto(t, 'filtered_leak', [zipPath])) as unknown as Summary;
    expect(zipped).toMatchObject({ failed: 0, records: 9, added: 9 });
    expect(zipped.warnings.map((w) => [w.reason, w.count])).toEqual([
      ['log date is ambiguous (day-first or month-first)', 1],
    ]);
    const { rows: zipRows } = await sql<{ machine: string; leaked_at: number | null }>`
      select c.machine, c.leaked_at from leak_credentials c join leak_files l on l.id = c.leak_id where l.name = 'cloud-logs.zip' and c.login = 'tomek.k@mailbox-demo.org'`.execute(
      t.container.store.db,
    );
    expect(zipRows.map((row) => [row.machine, Number(row.leaked_at)])).toEqual([
      ['PL_5E9B1C77D0A24F31A8C3', Date.UTC(2025, 6, 30, 6, 1, 44)],
    ]);

    const json = path.join(dir, 'export.json');
    writeFileSync(json, '[{"login": "a@contoso-demo.com", "password": "x"}]\n');
    const refused = (await ingestInto(t, 'filtered_leak', [json])) as unknown as Summary;
    expect(refused.failed).toBe(1);
    expect(refused.results[0]!.error).toMatch(
      /is in none of the formats filtered_leak reads: stealer_log \(.*\), combolist \(.*\)/,
    );
  });

  it('stores no log date in the future', async () => {
    const { rows } = await sql<{
      latest: number | null;
    }>`select max(leaked_at) as latest from leak_credentials`.execute(t.container.store.db);
    expect(Number(rows[0]!.latest)).toBeLessThanOrEqual(Date.now());
  });
});

describe('dragnet ingest filtered_leak - (standard input) detects its format', () => {
  let location: TestStoreLocation;
  beforeAll(async () => {
    location = await createTestStoreLocation();
  });
  afterAll(async () => {
    await location?.drop();
  });

  it(
    'reads a passwords file as one credential a block, a combolist a line, and refuses JSON naming both formats',
    async () => {
      const passwords = readFileSync(path.join(LOGS, 'PL_5E9B1C77D0A24F31A8C3', 'Browsers', 'Passwords.txt'), 'utf8');
      // Read as a combolist, its four Key: value lines would be four "credentials".
      const asLog = await runCli(['--json', 'ingest', 'filtered_leak', '-'], { env: location.env, input: passwords });
      expect(asLog.code, asLog.stderr).toBe(0);
      expect(JSON.parse(asLog.stdout)).toMatchObject({ records: 1, added: 1, rejected: 0 });
      const combo = await runCli(['--json', 'ingest', 'filtered_leak', '-'], {
        env: location.env,
        input: readFileSync(path.join(FIXTURES, 'combolist.txt'), 'utf8'),
      });
      expect(JSON.parse(combo.stdout)).toMatchObject({ records: 4, added: 4, rejected: 0 });
      const json = await runCli(['ingest', 'filtered_leak', '-'], {
        env: location.env,
        input: '{"login": "a@contoso-demo.com", "password": "x"}\n',
      });
      expect(json.code).toBe(1);
      expect(json.stdout + json.stderr).toMatch(
        /none of the formats filtered_leak reads: stealer_log \(.*\), combolist \(/,
      );
    },
    scaled(120_000),
  );
});
