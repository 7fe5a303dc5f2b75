import { spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, repoRoot, type CliResult } from '../support/cli.ts';
import {
  createTestCa,
  issueCertificate,
  issuePrecertificate,
  precertEntry,
  startCtLogServer,
  x509Entry,
  type CtLogServer,
  type TestCa,
} from '../support/ct-log.ts';
import { ctLogsCollector } from '../../src/modules/sources/certificate/ct-logs.collector.ts';
import {
  createDeliveryKit,
  createRulesApp,
  HOUR,
  iso,
  rulesUser,
  sourceRule,
  tickAndDeliver,
  type DeliveryKit,
  type HitView,
  type RulesApi,
} from '../support/rules-api.ts';
import type { TestApp } from '../support/test-app.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';
import { scaled, waitFor } from '../support/wait.ts';

/**
 * The ct-logs collector against real RFC 6962 logs: two local logs (node:http on 127.0.0.1)
 * serving get-sth and get-entries with MerkleTreeLeaf/extra_data encoding, at most 3 entries per
 * answer, filled with real certificates and precertificates signed by test CAs made here. The
 * collector runs through the collectors runner in-process (the test app's manual clock dates
 * what it stores, so a rule's windows can be checked) and through `dragnet collectors run` in
 * child processes on the same store (a new process resumes from the stored cursor).
 */

const T0 = Date.parse('2026-03-10T09:00:00Z');
const DAY = 24 * HOUR;
const CERTIFICATE = 9;
// Each command is a fresh Node process (bin/dragnet.js on dist/): under a second each, seconds on a busy machine.
const CLI_TEST_MS = scaled(240_000);

const acmeCa = createTestCa('Acme Test Trust', 'Acme Test Trust ECC CA 1');
const globexCa = createTestCa('Globex Test CA', 'Globex Test DV CA 2026');
let serial = 0x1000;
let loggedAt = Date.parse('2026-03-09T12:00:00Z');
const spec = (names: string[]) => ({
  names,
  serial: serial++,
  notBefore: new Date('2026-03-01T00:00:00Z'),
  notAfter: new Date('2026-05-30T00:00:00Z'),
});

/** Appends a final certificate to the logs (one issuance logged in each); returns its DER. */
function logCertificate(logs: CtLogServer[], ca: TestCa, names: string[]): Buffer {
  const der = issueCertificate(ca, spec(names));
  for (const log of logs) log.entries.push(x509Entry(der, ca, (loggedAt += 60_000)));
  return der;
}

/** Appends a precertificate entry to the logs; returns the precertificate's DER. */
function logPrecertificate(logs: CtLogServer[], ca: TestCa, names: string[]): Buffer {
  const precert = issuePrecertificate(ca, spec(names));
  for (const log of logs) log.entries.push(precertEntry(precert, ca, (loggedAt += 60_000)));
  return precert.precertificate;
}

const idOf = (log: CtLogServer) => log.url.replace('http://', '');

describe(`ct-logs collector against local RFC 6962 logs (${testEngine})`, () => {
  let location: TestStoreLocation;
  let dir: string;
  let argon: CtLogServer;
  let xenon: CtLogServer;
  let collectorsFile: string;
  let env: Record<string, string>;
  let t: TestApp;
  let alice: RulesApi;
  let kit: DeliveryKit;
  let rule: number;
  const der: Record<string, Buffer> = {};

  const cli = (args: string[]): Promise<CliResult> => runCli(args, { env, timeoutMs: scaled(60_000) });
  const runCollector = () => cli(['collectors', 'run', 'ct-logs']);
  const state = async () => (await t.container.collectors.status()).find((collector) => collector.name === 'ct-logs')!;
  const cursorOf = async () => ((await state()).cursor as { logs: Record<string, number> }).logs;
  const hitsOf = async (matchId: number) => (await alice.hits(matchId, { page_size: 100 })).results;
  const names = (hits: HitView[]) => hits.map((hit) => hit.common_name);
  const storedFrom = async (log: CtLogServer) =>
    Number(
      (
        await sql<{ n: number }>`select count(*) as n from certificates where log_url = ${idOf(log)}`.execute(
          t.container.store.db,
        )
      ).rows[0]!.n,
    );

  beforeAll(async () => {
    location = await createTestStoreLocation();
    dir = mkdtempSync(path.join(tmpdir(), 'dragnet-ct-collector-'));
    [argon, xenon] = await Promise.all([
      startCtLogServer('argon2026h1', { maxPerResponse: 3 }),
      startCtLogServer('xenon2026h1', { maxPerResponse: 3 }),
    ]);
    collectorsFile = path.join(dir, 'collectors.json');
    writeFileSync(
      collectorsFile,
      JSON.stringify({ 'ct-logs': { logs: [argon.url, xenon.url], batch_size: 4, start: '0', timeout_ms: 10_000 } }),
    );
    env = { ...location.env, DRAGNET_COLLECTORS_FILE: collectorsFile };

    // The same certificate and precertificate are logged in both logs.
    der.apex = logCertificate([argon, xenon], acmeCa, ['acme-bank.com', 'www.acme-bank.com']);
    der.loginPrecert = logPrecertificate([argon, xenon], acmeCa, ['login.acme-bank.com']);
    der.login = logCertificate([argon], acmeCa, ['login.acme-bank.com']);
    logCertificate([argon], globexCa, ['mail.northwind-traders.com']);
    der.lookalike = logCertificate([argon], globexCa, ['acme-bank-secure-login.com', 'www.acme-bank-secure-login.com']);
    logCertificate([argon], globexCa, ['shop.example-store.com']);
    der.support = logPrecertificate([argon], globexCa, ['acmebank-support.net', '*.acmebank-support.net']);
    der.mail = logCertificate([xenon], acmeCa, ['mail.acme-bank.com']);

    t = await createRulesApp({ location, env: { DRAGNET_COLLECTORS_FILE: collectorsFile } });
    t.clock.set(new Date(T0));
    alice = await rulesUser(t, 'Acme', 'alice@acme.test');
    kit = await createDeliveryKit(alice, { tag: 'ct' });
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all([argon?.close(), xenon?.close()]);
    await location?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('reads both logs from index 0 in batches, stores each certificate once, and a rule finds them', async () => {
    expect(await t.container.collectors.runNow(['ct-logs'])).toEqual([{ name: 'ct-logs', outcome: 'ran', items: 8 }]);
    // batch_size 4, but the log answers at most 3: the collector asks again from where it got to.
    expect(argon.requests).toEqual([
      [0, 3],
      [3, 6],
      [6, 6],
    ]);
    expect(xenon.requests).toEqual([[0, 2]]);
    expect(await cursorOf()).toEqual({ [idOf(argon)]: 7, [idOf(xenon)]: 3 });
    expect(await storedFrom(argon)).toBe(7);
    // Of xenon's three entries, two are argon's certificate and precertificate again.
    expect(await storedFrom(xenon)).toBe(1);

    const created = await alice.created(sourceRule(kit, 'Acme in CT', CERTIFICATE, { domain: 'acme-bank.com' }));
    rule = created.id;
    expect(created).toMatchObject({ total_matches_count: 6, last_run: iso(T0) });
    const [match] = (await alice.matches(rule)).results;
    const hits = await hitsOf(match!.id);
    expect(names(hits)).toEqual([
      'mail.acme-bank.com',
      'acmebank-support.net',
      'acme-bank-secure-login.com',
      'login.acme-bank.com',
      'login.acme-bank.com',
      'acme-bank.com',
    ]);

    const precert = new X509Certificate(der.loginPrecert!);
    const precertHit = hits.find(
      (hit) => hit.update_type === 'PrecertLogEntry' && hit.common_name === 'login.acme-bank.com',
    )!;
    expect(precertHit).toEqual({
      id: expect.any(Number),
      hit_key: expect.stringMatching(/^certificate:\d+$/),
      is_excluded: false,
      common_name: 'login.acme-bank.com',
      all_domains: ['login.acme-bank.com'],
      matched_names: ['login.acme-bank.com'],
      match_type: 'subdomain',
      issuer: 'Acme Test Trust',
      issuer_cn: 'Acme Test Trust ECC CA 1',
      subject_org: null,
      not_before: '2026-03-01T00:00:00.000Z',
      not_after: '2026-05-30T00:00:00.000Z',
      // The precertificate's fingerprint (from extra_data), as crt.sh shows it.
      fingerprint: precert.fingerprint256,
      sha1_fingerprint: precert.fingerprint,
      serial_number: precert.serialNumber.toUpperCase().replace(/^0+/, ''),
      update_type: 'PrecertLogEntry',
      log_name: idOf(argon),
      log_url: idOf(argon),
      cert_index: 1,
      cert_link: `${argon.url}ct/v1/get-entries?start=1&end=1`,
      // Logged third: the apex certificate was logged in argon, then in xenon, a minute apart.
      seen: iso(Date.parse('2026-03-09T12:03:00Z')),
      discovered_at: iso(T0),
    });
    const final = hits.find((hit) => hit.update_type === 'X509LogEntry' && hit.common_name === 'login.acme-bank.com')!;
    expect(final).toMatchObject({ fingerprint: new X509Certificate(der.login!).fingerprint256, cert_index: 2 });
    expect(hits.find((hit) => hit.common_name === 'acme-bank.com')).toMatchObject({
      match_type: 'exact',
      log_url: idOf(argon),
      cert_index: 0,
      fingerprint: new X509Certificate(der.apex!).fingerprint256,
    });
    expect(hits.find((hit) => hit.common_name === 'acmebank-support.net')).toMatchObject({
      match_type: 'lookalike',
      matched_names: ['acmebank-support.net', '*.acmebank-support.net'],
      issuer: 'Globex Test CA',
      update_type: 'PrecertLogEntry',
    });
    expect(hits[0]).toMatchObject({ common_name: 'mail.acme-bank.com', log_url: idOf(xenon), cert_index: 2 });
  });

  it("the next run reads only the new entries, and the rule's next run reports only them", async () => {
    logCertificate([argon], globexCa, ['acme-bank-verify.com']);
    logCertificate([argon], globexCa, ['intranet.northwind-traders.com']);
    t.clock.set(new Date(T0 + DAY - HOUR));
    expect(await t.container.collectors.runNow(['ct-logs'])).toEqual([{ name: 'ct-logs', outcome: 'ran', items: 2 }]);
    expect(argon.requests.slice(3)).toEqual([[7, 8]]);
    // xenon did not grow: get-sth only.
    expect(xenon.requests).toHaveLength(1);

    t.clock.set(new Date(T0 + DAY));
    await alice.relogin();
    await tickAndDeliver(t);
    const { results } = await alice.matches(rule);
    expect(results).toHaveLength(2);
    expect(results[0]).toMatchObject({ total_hits: 1, window_start: iso(T0), window_end: iso(T0 + DAY) });
    expect(names(await hitsOf(results[0]!.id))).toEqual(['acme-bank-verify.com']);
  });

  it(
    'dragnet collectors run: a 500 mid-way stops that log at its last stored batch, the other log goes on, and a later run completes',
    async () => {
      for (const name of ['portal', 'cards', 'loans', 'careers', 'status'])
        logCertificate([argon], acmeCa, [`${name}.acme-bank.com`]);
      logCertificate([xenon], acmeCa, ['pay.acme-bank.com']);
      argon.faults.push(null, { status: 500 });

      const failed = await runCollector();
      expect(failed.code).toBe(1);
      expect(failed.stdout.trim()).toBe(
        `ct-logs: failed: 1 of 2 logs failed (4 new certificates stored): ${argon.url}ct/v1/get-entries?start=12&end=13 answered HTTP 500`,
      );
      expect(failed.stderr).toContain(`collector ct-logs: ${idOf(argon)} stopped, its cursor kept`);
      expect(argon.requests.slice(4)).toEqual([
        [9, 12],
        [12, 13],
      ]);
      expect(await cursorOf()).toEqual({ [idOf(argon)]: 12, [idOf(xenon)]: 4 });
      expect(await state()).toMatchObject({
        consecutive_failures: 1,
        last_error: expect.stringContaining('answered HTTP 500'),
      });

      // A new process resumes from the stored cursor.
      const again = await runCollector();
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout.trim()).toBe('ct-logs: 2 items stored');
      expect(argon.requests.slice(6)).toEqual([[12, 13]]);
      expect(await cursorOf()).toEqual({ [idOf(argon)]: 14, [idOf(xenon)]: 4 });
      expect(await state()).toMatchObject({ consecutive_failures: 0 });
      expect(await storedFrom(argon)).toBe(14);
    },
    CLI_TEST_MS,
  );

  it(
    'a 429 is waited out as Retry-After says',
    async () => {
      logCertificate([argon], acmeCa, ['news.acme-bank.com']);
      argon.faults.push({ status: 429, headers: { 'retry-after': '1' } });
      const result = await runCollector();
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout.trim()).toBe('ct-logs: 1 items stored');
      expect(argon.requests.slice(7)).toEqual([
        [14, 14],
        [14, 14],
      ]);
    },
    CLI_TEST_MS,
  );

  it(
    'a run killed mid-way resumes after its last stored batch in a new process, nothing stored twice',
    async () => {
      for (let i = 1; i <= 6; i++) logCertificate([argon], acmeCa, [`branch${i}.acme-bank.com`]);
      argon.faults.push(null, 'hang');
      const child = spawn(process.execPath, ['bin/dragnet.js', 'collectors', 'run', 'ct-logs'], {
        cwd: repoRoot,
        env: { ...process.env, DRAGNET_LOG_LEVEL: 'warn', ...env },
        stdio: 'ignore',
      });
      const exited = new Promise((resolve) => child.on('exit', resolve));
      try {
        // The second batch's request hangs: the first batch is stored and its cursor saved.
        await waitFor('the killed run to get to its second batch', () => argon.requests.length >= 11, {
          timeoutMs: scaled(60_000),
          everyMs: 100,
        }).catch((error: Error) => {
          throw new Error(`${error.message}: ${JSON.stringify(argon.requests)}`);
        });
      } finally {
        child.kill('SIGKILL');
        await exited;
      }
      expect(argon.requests.slice(9)).toEqual([
        [15, 18],
        [18, 20],
      ]);
      expect((await cursorOf())[idOf(argon)]).toBe(18);
      // The killed process's lease would run out after 10 minutes; end it now.
      await t.container.store.db
        .updateTable('collector_state')
        .set({ claimed_until: null })
        .where('name', '=', 'ct-logs')
        .execute();

      const resumed = await runCollector();
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout.trim()).toBe('ct-logs: 3 items stored');
      expect(argon.requests.slice(11)).toEqual([[18, 20]]);
      expect(await cursorOf()).toEqual({ [idOf(argon)]: 21, [idOf(xenon)]: 4 });
      expect(await storedFrom(argon)).toBe(21);
    },
    CLI_TEST_MS,
  );

  it(
    'a log added with start "now" begins at its current tree size',
    async () => {
      const nimbus = await startCtLogServer('nimbus2026', { maxPerResponse: 3 });
      try {
        logCertificate([nimbus], acmeCa, ['old.acme-bank.com']);
        logCertificate([nimbus], acmeCa, ['older.acme-bank.com']);
        writeFileSync(collectorsFile, JSON.stringify({ 'ct-logs': { logs: [argon.url, nimbus.url], start: 'now' } }));
        const first = await runCollector();
        expect(first.code, first.stderr).toBe(0);
        expect(first.stdout.trim()).toBe('ct-logs: 0 items stored');
        expect(nimbus.requests).toEqual([]);

        logCertificate([nimbus], acmeCa, ['new.acme-bank.com']);
        const second = await runCollector();
        expect(second.stdout.trim()).toBe('ct-logs: 1 items stored');
        expect(nimbus.requests).toEqual([[2, 2]]);
        // A log no longer configured keeps its cursor, for when it comes back.
        expect(await cursorOf()).toEqual({ [idOf(argon)]: 21, [idOf(xenon)]: 4, [idOf(nimbus)]: 3 });
      } finally {
        await nimbus.close();
      }
    },
    CLI_TEST_MS,
  );

  it('a log that does not answer in time, or is down, fails with the reason and keeps its cursor', async () => {
    const slow = await startCtLogServer('slow2026', { maxPerResponse: 3 });
    const down = await startCtLogServer('down2026', { maxPerResponse: 3 });
    const downUrl = down.url;
    await down.close();
    try {
      logCertificate([slow], acmeCa, ['slow.acme-bank.com']);
      slow.faults.push('hang');
      const saved: unknown[] = [];
      const run = ctLogsCollector.run(t.container.sourceContext, {
        settings: ctLogsCollector.parseSettings({ logs: [slow.url, downUrl], start: '0', timeout_ms: 300 }),
        cursor: null,
        saveCursor: async (cursor) => void saved.push(structuredClone(cursor)),
        signal: new AbortController().signal,
        http: t.container.collectorHttp,
        log: () => {},
      });
      await expect(run).rejects.toThrow(
        `2 of 2 logs failed (0 new certificates stored): ${slow.url}ct/v1/get-entries?start=0&end=0: no answer within 300 ms; ${downUrl}ct/v1/get-sth: connect ECONNREFUSED`,
      );
      expect(saved).toEqual([{ logs: { [idOf(slow)]: 0 } }]);
    } finally {
      await slow.close();
    }
  });

  it(
    'a wrong setting is named at start-up',
    async () => {
      writeFileSync(collectorsFile, JSON.stringify({ 'ct-logs': { logs: [argon.url, 'ftp://ct.example.test/log/'] } }));
      const result = await runCollector();
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain('ct-logs.logs[1]: must be an http(s) URL');
    },
    CLI_TEST_MS,
  );
});
