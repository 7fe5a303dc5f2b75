import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findSource } from '../../src/modules/sources/index.ts';
import { runCli, repoRoot, type CliResult } from '../support/cli.ts';
import { expectError } from '../support/http.ts';
import {
  createDeliveryKit,
  createRulesApp,
  deliverPending,
  HOUR,
  iso,
  payloadOf,
  requestsTo,
  rulePaths,
  rulesUser,
  sourceRule,
  tickAndDeliver,
  type DeliveryKit,
  type HitView,
} from '../support/rules-api.ts';
import { checkDemo, sourceSuite } from '../support/source-suite.ts';
import type { TestApp } from '../support/test-app.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';
import { verifyAlertSystemSignature } from '../support/webhook-receiver.ts';
import { scaled } from '../support/wait.ts';

/**
 * The paste-site source end to end: generic paste JSON Lines and a saved Pastebin scraping list
 * ingested by the real ingester, rules over HTTP, hits filtered, sorted and excluded, email and
 * signed webhook, the next tick; then the pastebin-scraping collector through `dragnet
 * collectors run` against a local scraping API. Accounts and passwords are made up.
 */

const T0 = Date.parse('2026-03-10T09:00:00Z');
const DAY = 24 * HOUR;

const paste = (key: string, fields: Record<string, unknown>) => ({
  site: 'pastebin',
  key,
  title: '',
  syntax: 'text',
  user: '',
  date: '2026-03-09T10:00:00Z',
  expire: 0,
  url: `https://pastebin.com/${key}`,
  ...fields,
});
const lines = (records: unknown[]) =>
  records.map((record) => (typeof record === 'string' ? record : JSON.stringify(record))).join('\n') + '\n';

const STAFF = 'j.doe@acme-bank.com password: Spring2026!';
const pastes = lines([
  paste('Xq7mTz2K', { title: 'acme-bank.com employees', user: 'anon1337', content: STAFF, expire: '1775728800' }),
  paste('Lp0dUmp1', {
    site: 'paste_ee',
    syntax: 'SQL',
    url: 'https://paste.ee/p/Lp0dUmp1',
    content: "INSERT INTO users VALUES ('it@acme-bank.com', 'password=Adm1n!');",
    date: '2026-03-09T11:00:00Z',
  }),
  paste('R3ntry01', {
    site: 'rentry',
    url: 'https://rentry.co/R3ntry01',
    content: 'acme-bank.com status page is down again',
  }),
  paste('Py7hon01', { syntax: 'python', content: 'password = input()  # globex.com login' }),
  paste('Bad51te0', { site: 'paste bin', content: 'acme-bank.com password' }),
  paste('Xq7mTz2K', { title: 'acme-bank.com employees', user: 'anon1337', content: STAFF }),
  // PostgreSQL keeps no NUL in text or jsonb: removed on both engines (docs/ingest.md).
  paste('NulByte1', { user: 'nul\u0000user', content: 'MZ\u0000\u0000 binary acme-bank.com' }),
]);
const listEntry = (key: string, extra: Record<string, unknown> = {}) => ({
  scrape_url: `https://scrape.pastebin.com/api_scrape_item.php?i=${key}`,
  full_url: `https://pastebin.com/${key}`,
  date: '1773054000',
  key,
  size: '120',
  expire: '0',
  title: '',
  syntax: 'text',
  user: '',
  ...extra,
});
const scrapedList = JSON.stringify([
  listEntry('In1ine01', {
    title: 'ACME-BANK.COM VPN',
    content: 'vpn.acme-bank.com user: svc_backup Password: Backup#2026',
  }),
  listEntry('F1leTxt1', { syntax: 'sql', date: '1773054100' }),
  listEntry('N0text01'),
]);
const padding = 'lorem ipsum dolor sit amet '.repeat(40);
const late = lines([
  paste('L0ngPst1', {
    title: 'notes',
    content: `${padding}db.acme-bank.com root password hunter2 ${padding}`,
    date: '2026-03-10T10:00:00Z',
  }),
]);

const QUERY = 'acme-bank.com AND password';

describe(`sources: paste sites end to end (${testEngine})`, () => {
  const s = sourceSuite('paste');
  const keys = (hits: HitView[]) => hits.map((hit) => hit.paste_key);
  const files: Record<string, string> = {};
  let rule: number;
  let kit: DeliveryKit;
  let matchId: number;

  it('ingests paste JSON Lines and a saved scraping list with its <key>.txt files, reporting bad records', async () => {
    files.pastes = s.file('pastes.jsonl', pastes);
    mkdirSync(path.join(s.dir, 'scrape'));
    files.list = s.file('scrape/list.json', scrapedList);
    s.file('scrape/F1leTxt1.txt', 'CREATE TABLE vpn_users (login text, password text); -- acme-bank.com');
    files.late = s.file('late.jsonl', late);

    await s.moveTo(T0 - 2 * HOUR);
    const jsonl = await s.ingest('paste_site', [files.pastes]);
    expect(jsonl.summary).toMatchObject({ inputs: 1, records: 6, added: 5, duplicates_skipped: 1, rejected: 1 });
    expect(jsonl.lines.slice(1)).toEqual([
      `  rejected ${files.pastes} line 5: site must be a name such as pastebin or paste_ee`,
    ]);

    await s.moveTo(T0 - HOUR);
    const list = await s.ingest('paste_site', [path.join(s.dir, 'scrape')], 'pastebin');
    expect(list.summary).toMatchObject({ inputs: 1, records: 2, added: 2, rejected: 1 });
    expect(list.tally.errors).toEqual([
      {
        location: `${files.list} record 3`,
        reason: 'no content: neither a content field nor N0text01.txt beside the list',
      },
    ]);
  });

  it('a rule reports the matching pastes at creation, newest first, with a snippet; email and signed webhook are delivered', async () => {
    await s.moveTo(T0);
    kit = await s.newKit();
    const created = await s.alice.created(sourceRule(kit, 'Acme passwords in pastes', 12, { query: QUERY }));
    rule = created.id;
    expect(created).toMatchObject({ service: 12, total_matches_count: 4, total_alerts_count: 1 });
    const match = await s.onlyMatch(rule);
    matchId = match.id;
    expect(match).toMatchObject({ total_hits: 4, window_start: null, window_end: iso(T0) });
    const hits = await s.hitsOf(match.id);
    expect(keys(hits)).toEqual(['F1leTxt1', 'In1ine01', 'Lp0dUmp1', 'Xq7mTz2K']);
    expect(hits[3]).toEqual({
      id: expect.any(Number),
      hit_key: expect.any(String),
      is_excluded: false,
      paste_key: 'Xq7mTz2K',
      site: 'pastebin',
      title: 'acme-bank.com employees',
      syntax: 'text',
      user: 'anon1337',
      size: Buffer.byteLength(STAFF),
      url: 'https://pastebin.com/Xq7mTz2K',
      expire: '2026-04-09T10:00:00.000Z',
      snippet: `acme-bank.com employees\n${STAFF}`,
      posted_at: '2026-03-09T10:00:00.000Z',
      discovered_at: iso(T0 - 2 * HOUR),
    });
    expect(hits[0]).toMatchObject({
      site: 'pastebin',
      syntax: 'sql',
      title: null,
      user: null,
      size: 120,
      expire: null,
      posted_at: '2026-03-09T11:01:40.000Z',
      discovered_at: iso(T0 - HOUR),
    });

    expect(await deliverPending(s.t)).toBe(2);
    const hooks = requestsTo(s.receiver, kit);
    expect(hooks).toHaveLength(1);
    expect(
      verifyAlertSystemSignature(kit.webhook!.secret, hooks[0]!.body, hooks[0]!.headers['x-alertsystem-signature']),
    ).toBe(true);
    expect(payloadOf(hooks[0]!)).toMatchObject({
      alert_rule_name: 'Acme passwords in pastes',
      service: 'Paste sites',
      total_matches: 4,
    });
    expect(s.smtp.messages.filter((m) => m.to.includes(kit.recipient.email)).map((m) => m.parsed.html)).toEqual([
      expect.stringContaining('Acme passwords in pastes: 4 hits in Paste sites'),
    ]);
  });

  it('hits filter, sort and exclude by the declared fields', async () => {
    expect(keys(await s.hitsOf(matchId, { filter: 'site:PASTEBIN' }))).toEqual(['F1leTxt1', 'In1ine01', 'Xq7mTz2K']);
    expect(keys(await s.hitsOf(matchId, { filter: ['syntax:sql', 'site:paste_ee'] }))).toEqual(['Lp0dUmp1']);
    expect(keys(await s.hitsOf(matchId, { sort: 'size' }))).toEqual(['Xq7mTz2K', 'Lp0dUmp1', 'F1leTxt1', 'In1ine01']);
    expect(keys(await s.hitsOf(matchId, { sort: '-posted_at' }))).toEqual([
      'F1leTxt1',
      'In1ine01',
      'Lp0dUmp1',
      'Xq7mTz2K',
    ]);
    expect(keys(await s.hitsOf(matchId, { sort: 'discovered_at' }))).toEqual([
      'Lp0dUmp1',
      'Xq7mTz2K',
      'F1leTxt1',
      'In1ine01',
    ]);
    expectError(await s.alice.get(`${rulePaths.hits(matchId)}?filter=title:x`), 400, 'validation_failed');

    expect((await s.alice.createExclusion(rule, { field: 'syntax', value: 'SQL' })).statusCode).toBe(201);
    expect(keys(await s.hitsOf(matchId, { include_excluded: false }))).toEqual(['In1ine01', 'Xq7mTz2K']);
    expect(await s.alice.getJson(rulePaths.match(matchId))).toMatchObject({ excluded_hits: 2, new_hits: 2 });
    for (const { id } of await s.alice.exclusions(rule))
      expect((await s.alice.deleteExclusion(id)).statusCode).toBe(204);
  });

  it('narrows by sites and syntaxes, any case; the catalog example finds the pastebin text and sql pastes', async () => {
    const narrowed = await s.newKit();
    const run = async (name: string, args: Record<string, unknown>) => {
      const created = await s.alice.created(sourceRule(narrowed, name, 12, { query: QUERY, ...args }));
      return created.total_matches_count === 0 ? [] : keys(await s.hitsOf((await s.onlyMatch(created.id)).id));
    };
    expect(await run('paste.ee', { sites: ['Paste_EE'] })).toEqual(['Lp0dUmp1']);
    expect(await run('sql', { syntaxes: ['SQL'] })).toEqual(['F1leTxt1', 'Lp0dUmp1']);
    expect(await run('the example', { sites: ['pastebin'], syntaxes: ['text', 'sql'] })).toEqual([
      'F1leTxt1',
      'In1ine01',
      'Xq7mTz2K',
    ]);
    expect(await run('a phrase', { query: '"user: svc_backup"' })).toEqual(['In1ine01']);
  });

  it('match counts every hit of the window and returns at most the limit; args are checked', async () => {
    const result = await findSource(12)!.match(
      s.t.container.sourceContext,
      { query: QUERY },
      { since: T0 - 2 * HOUR, until: T0 },
      1,
    );
    expect(result).toMatchObject({ total: 2, hits: [{ key: 'pastebin:F1leTxt1', date: T0 - HOUR }] });
    const binary = await findSource(12)!.match(
      s.t.container.sourceContext,
      { query: 'binary' },
      { since: null, until: T0 },
      10,
    );
    expect(binary.hits.map((hit) => [hit.data.user, hit.data.snippet])).toEqual([
      ['nuluser', 'MZ binary acme-bank.com'],
    ]);
    const error = expectError(
      await s.alice.create(sourceRule(kit, 'bad', 12, { query: '"acme' })),
      400,
      'validation_failed',
    );
    expect(error.fields).toEqual([
      { field: 'args.query', message: expect.stringContaining('unterminated quote'), rule: 3 },
    ]);
  });

  it('the next tick reports only pastes learned of after the last run, the snippet cut around the match; re-ingesting adds nothing', async () => {
    await s.moveTo(T0 + 2 * HOUR);
    expect((await s.ingest('paste_site', [files.late!])).summary).toMatchObject({ added: 1 });
    expect((await s.ingest('paste_site', [files.pastes!])).summary).toMatchObject({ added: 0, duplicates_skipped: 6 });
    expect((await s.ingest('paste_site', [files.list!], 'pastebin')).summary).toMatchObject({
      added: 0,
      duplicates_skipped: 2,
    });
    await s.moveTo(T0 + DAY);
    await tickAndDeliver(s.t);
    const { results } = await s.alice.matches(rule, { page_size: 100 });
    expect(results).toHaveLength(2);
    expect(results[0]).toMatchObject({ total_hits: 1, window_start: iso(T0), window_end: iso(T0 + DAY) });
    const [hit] = await s.hitsOf(results[0]!.id);
    expect(hit!.paste_key).toBe('L0ngPst1');
    const snippet = hit!.snippet as string;
    expect(snippet).toMatch(/^….*db\.acme-bank\.com root password.*…$/s);
    expect([...snippet].length).toBe(300 + 2);
  });

  it("another organization's hits are 404", async () => {
    await s.mallory.relogin();
    expectError(await s.mallory.get(rulePaths.hits(matchId)), 404, 'not_found');
  });
});

describe(`sources: the paste-site demo (${testEngine})`, () => {
  it('loads once, and the catalog example finds the pastebin text and sql pastes', async () => {
    const { line, again, hits } = await checkDemo(12);
    expect(line).toMatch(/^Demo paste sites: \d+ pastes added/);
    expect(again).toContain(': 0 pastes added');
    expect(hits.map((hit) => hit.data.syntax)).toEqual(expect.arrayContaining(['text', 'sql']));
    expect(hits.every((hit) => hit.data.site === 'pastebin')).toBe(true);
  });
});

// --- The pastebin-scraping collector, through `dragnet collectors run`, against a local API.

// Each command is a fresh Node process (bin/dragnet.js on dist/): under a second each, seconds on a busy machine.
const CLI_TEST_MS = scaled(300_000);

const FIXTURE = path.resolve(repoRoot, '..', 'shared', 'fixtures', 'pastebin', 'api_scraping.doc-example.json');
const documented = (
  existsSync(FIXTURE)
    ? JSON.parse(readFileSync(FIXTURE, 'utf8'))
    : [listEntry('0CeaNm8Y', { date: '1442911802' }), listEntry('8sUIsf34', { date: '1442911665' })]
) as Record<string, string>[];

interface ScrapingApi {
  server: Server;
  base: string;
  /** The list as served, newest first (scrape_url pointing at this server). */
  list: Record<string, string>[];
  contents: Map<string, string>;
  /** Keys whose content answers HTTP 500. */
  failing: Set<string>;
  /** The list endpoint answers this sentence instead of JSON (Pastebin's answer to a non-whitelisted IP). */
  refusal: string | null;
  itemRequests: string[];
}

function startScrapingApi(): Promise<ScrapingApi> {
  const api = {
    list: [],
    contents: new Map(),
    failing: new Set(),
    refusal: null,
    itemRequests: [],
  } as unknown as ScrapingApi;
  api.server = createServer((request, response) => {
    const url = new URL(request.url!, 'http://127.0.0.1');
    if (url.pathname === '/api_scraping.php') {
      if (api.refusal) response.writeHead(200, { 'content-type': 'text/html' }).end(api.refusal);
      else
        response
          .writeHead(200, { 'content-type': 'application/json' })
          .end(
            JSON.stringify(
              api.list.map((entry) => ({ ...entry, scrape_url: `${api.base}/api_scrape_item.php?i=${entry.key}` })),
            ),
          );
      return;
    }
    const key = url.searchParams.get('i') ?? '';
    api.itemRequests.push(key);
    if (url.pathname !== '/api_scrape_item.php' || api.failing.has(key))
      response.writeHead(500).end('Internal Server Error');
    else
      response
        .writeHead(200, { 'content-type': 'text/plain; charset=utf-8' })
        .end(api.contents.get(key) ?? 'Error, we cannot find this paste.');
  });
  return new Promise((resolve) => {
    api.server.listen(0, '127.0.0.1', () => {
      api.base = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
      resolve(api);
    });
  });
}

describe(`dragnet collectors run pastebin-scraping (${testEngine})`, () => {
  let location: TestStoreLocation;
  let dir: string;
  let api: ScrapingApi;
  let env: Record<string, string>;
  // Opened first, so the store's migrations are this code's even if the tree changes under a long run.
  let t: TestApp;
  const cli = (args: string[]): Promise<CliResult> => runCli(args, { env, timeoutMs: scaled(60_000) });
  const run = () => cli(['collectors', 'run', 'pastebin-scraping']);
  /** The collector's row as `dragnet collectors` shows it, read in-process from the same store. */
  const status = async () => {
    const found = (await t.container.collectors.status()).find((collector) => collector.name === 'pastebin-scraping')!;
    return found as typeof found & {
      cursor: { date: number; keys: string[]; retry: { entry: { key: string }; attempts: number }[] };
    };
  };
  const requestsFor = (key: string) => api.itemRequests.filter((requested) => requested === key).length;

  beforeAll(async () => {
    location = await createTestStoreLocation();
    t = await createRulesApp({ location });
    dir = mkdtempSync(path.join(tmpdir(), 'dragnet-pastebin-collector-'));
    api = await startScrapingApi();
    const collectorsFile = path.join(dir, 'collectors.json');
    writeFileSync(
      collectorsFile,
      JSON.stringify({
        'pastebin-scraping': {
          url: `${api.base}/api_scraping.php?limit=250`,
          timeout_ms: 10_000,
          request_interval_ms: 0,
        },
      }),
    );
    env = { ...location.env, DRAGNET_COLLECTORS_FILE: collectorsFile };
  });
  afterAll(async () => {
    await new Promise((resolve) => api?.server.close(resolve));
    await t?.close();
    await location?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(
    'stores each new paste with its content; a failed fetch is tried again next run and given up after 3; a restart refetches nothing; a refused list fails the run',
    async () => {
      // 2026-03-09T10:00:00Z and the seconds before it; the documented entries are from 2015.
      api.list = [
        listEntry('AcmePw01', { date: '1773050400', title: 'acme vpn', size: '64' }),
        listEntry('flaky001', { date: '1773050400' }),
        listEntry('broken01', { date: '1773050300' }),
        listEntry('removed1', { date: '1773050200' }),
        ...documented,
      ];
      for (const entry of documented) api.contents.set(entry.key!, `public class Example { /* ${entry.title} */ }`);
      api.contents.set('AcmePw01', 'vpn.acme-bank.com svc_backup password Backup#2026');
      api.contents.set('flaky001', 'nothing to see');
      api.failing = new Set(['flaky001', 'broken01']);

      const first = await run();
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout.trim()).toBe('pastebin-scraping: 3 items stored');
      expect(first.stderr).toContain(
        'collector pastebin-scraping: flaky001: content not fetched (HTTP 500); tried again next run',
      );
      expect(first.stderr).toContain('collector pastebin-scraping: removed1: removed before its content was fetched');
      const afterFirst = await status();
      expect(afterFirst.cursor).toMatchObject({ date: 1773050400, keys: ['AcmePw01', 'flaky001'] });
      expect(afterFirst.cursor.retry.map((pending) => [pending.entry.key, pending.attempts])).toEqual([
        ['broken01', 1],
        ['flaky001', 1],
      ]);

      // flaky001 answers now; a paste listed in the cursor's second is new, an older unseen one is not.
      api.failing.delete('flaky001');
      api.list.unshift(listEntry('sameSec1', { date: '1773050400' }), listEntry('older001', { date: '1773050000' }));
      api.contents.set('sameSec1', 'acme-bank.com password reset codes');
      const second = await run();
      expect(second.code, second.stderr).toBe(0);
      expect(second.stdout.trim()).toBe('pastebin-scraping: 2 items stored');
      expect((await status()).cursor).toMatchObject({
        keys: ['AcmePw01', 'flaky001', 'sameSec1'],
        retry: [{ entry: { key: 'broken01' }, attempts: 2 }],
      });

      const third = await run();
      expect(third.stdout.trim()).toBe('pastebin-scraping: 0 items stored');
      expect(third.stderr).toContain('broken01: content not fetched (HTTP 500); given up after 3 attempts');
      expect((await status()).cursor.retry).toEqual([]);
      expect(
        Object.fromEntries(
          ['AcmePw01', 'flaky001', 'broken01', 'removed1', 'sameSec1', 'older001', '0CeaNm8Y'].map((key) => [
            key,
            requestsFor(key),
          ]),
        ),
      ).toEqual({
        AcmePw01: 1,
        flaky001: 2,
        broken01: 3,
        removed1: 1,
        sameSec1: 1,
        older001: 0,
        '0CeaNm8Y': 1,
      });

      api.refusal =
        'YOUR IP: 127.0.0.1 DOES NOT HAVE ACCESS. VISIT: https://pastebin.com/doc_scraping_api TO GET ACCESS!';
      const refused = await run();
      expect(refused.code).toBe(1);
      expect(refused.stdout.trim()).toBe(
        `pastebin-scraping: failed: scraping list ${api.base}/api_scraping.php?limit=250: not a JSON array: ${api.refusal}`,
      );
      expect(await status()).toMatchObject({ items_total: 5, cursor: { date: 1773050400, retry: [] } });
    },
    CLI_TEST_MS,
  );

  it('a rule finds the collected pastes', async () => {
    const alice = await rulesUser(t, 'Acme', 'alice@acme.test');
    const kit = await createDeliveryKit(alice, { tag: 'collected' });
    t.clock.set(new Date(Date.now() + 60_000));
    await alice.relogin();
    const created = await alice.created(sourceRule(kit, 'collected pastes', 12, { query: QUERY, sites: ['pastebin'] }));
    expect(created.total_matches_count).toBe(2);
    const { results } = await alice.matches(created.id);
    const hits = (await alice.hits(results[0]!.id)).results;
    expect(hits.map((hit) => hit.paste_key).sort()).toEqual(['AcmePw01', 'sameSec1']);
    expect(hits.find((hit) => hit.paste_key === 'AcmePw01')).toMatchObject({
      title: 'acme vpn',
      size: 64,
      posted_at: '2026-03-09T10:00:00.000Z',
      url: 'https://pastebin.com/AcmePw01',
      snippet: 'acme vpn\nvpn.acme-bank.com svc_backup password Backup#2026',
    });
  });

  it(
    'a wrong setting is named at start-up',
    async () => {
      writeFileSync(
        env.DRAGNET_COLLECTORS_FILE!,
        JSON.stringify({ 'pastebin-scraping': { url: `${api.base}/api_scraping.php`, timeout_ms: 0 } }),
      );
      const result = await run();
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain('pastebin-scraping.timeout_ms: must be a positive integer');
    },
    CLI_TEST_MS,
  );
});
