import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findSource } from '../../src/modules/sources/index.ts';
import { repoRoot } from '../support/cli.ts';
import { recordObservedDomains } from '../../src/modules/sources/common/domains/observed-domains.ts';
import { expectError } from '../support/http.ts';
import {
  deliverPending,
  HOUR,
  iso,
  payloadOf,
  requestsTo,
  rulePaths,
  sourceRule,
  tickAndDeliver,
  type DeliveryKit,
  type HitView,
} from '../support/rules-api.ts';
import { sourceSuite } from '../support/source-suite.ts';
import { testEngine } from '../support/test-store.ts';
import { verifyAlertSystemSignature } from '../support/webhook-receiver.ts';

/**
 * The phishing source end to end: NRD lists and a dnstwist scan from test/fixtures/phishing (and
 * the real NRD excerpt and dnstwist scan of youtube.com when ../shared/fixtures has them), a
 * synthetic NRD list (plain and adblock lines) holding lookalikes of acme-bank.com, a dnstwist
 * JSON scan with WHOIS and DNS data, ingested through the real ingester on the
 * test app's store and manual clock; rules over HTTP; hits with fuzzer, score and registrar,
 * filtered, sorted and excluded; email and signed webhook; the next tick through matchMany.
 */

const T0 = Date.parse('2026-03-10T09:00:00Z');
const DAY = 24 * HOUR;
const PHISHING = 8;
const NRD_FIXTURE = '/work/shared/fixtures/nrd/nrd-phishing-14day.excerpt.txt';
const DNSTWIST_FIXTURE = '/work/shared/fixtures/dnstwist/youtube.com.dnstwist.json';
const FIXTURES = path.join(repoRoot, 'test', 'fixtures', 'phishing');

const nrdList = [
  '# 14-day Newly Registered Domains (synthetic)',
  '# Time of Compilation: 2026-03-10 06:00:00 UTC',
  '#',
  'acme-bnak.com',
  'acmebank-secure.com',
  'garden-tools-shop.com',
  'acme-bank.com',
  'www.acme-bank.com',
  'not a domain!',
  '192.0.2.1',
  'acme-bank.shop',
  '||acme-bamk.com^',
  '||secure-acme-bank.net^$important',
  'acme-bank.com.login-verify.net',
  'acme.com',
  '',
].join('\n');

const dnstwistScan = JSON.stringify([
  { fuzzer: '*original', domain: 'acme-bank.com', dns_a: ['192.0.2.1'], dns_ns: ['ns1.acme-bank.com'] },
  {
    fuzzer: 'transposition',
    domain: 'acme-bnak.com',
    dns_a: ['198.51.100.7'],
    dns_aaaa: ['2001:db8::7'],
    dns_ns: ['ns1.cheap-dns.example'],
    dns_mx: ['mx.acme-bnak.com'],
    geoip: 'Netherlands',
    whois_registrar: 'Example Registrar, Inc.',
    whois_created: '2026-03-08',
  },
  {
    fuzzer: 'homoglyph',
    domain: 'xn--acme-bnk-4ya.com',
    dns_a: ['198.51.100.8'],
    geoip: 'Seychelles',
    whois_registrar: 'Demo Domains LLC',
  },
  { fuzzer: 'omission', domain: 'acmebank.com', dns_ns: ['!ServFail'] },
  { fuzzer: 'addition', domain: 'acme-banka.com' },
  { fuzzer: 'bitsquatting', domain: 'acme_bank.com', dns_a: ['198.51.100.9'] },
  'acme-bank.net',
]);

const late = [
  '# Time of Compilation: 2026-03-10 10:30:00 UTC',
  'acme-bannk.com',
  'acme-bnak.com',
  'quiet-meadow.org',
  '',
].join('\n');

describe(`sources: phishing lookalike domains end to end (${testEngine})`, () => {
  const s = sourceSuite('phishing');
  const domains = (hits: HitView[]) => hits.map((hit) => hit.domain);
  const files: Record<string, string> = {};
  let rule: number;
  let kit: DeliveryKit;
  let matchId: number;

  it('ingests NRD lists (ours, and the real excerpt when ../shared/fixtures has it); the compile time is each domain first_seen', async () => {
    await s.moveTo(T0 - 3 * HOUR);
    const real = existsSync(NRD_FIXTURE);
    const report = await s.ingest('phishing', [path.join(FIXTURES, 'nrd-14day.txt'), ...(real ? [NRD_FIXTURE] : [])]);
    const records = 3 + (real ? 42 : 0);
    expect(report.summary).toMatchObject({
      inputs: real ? 2 : 1,
      failed: 0,
      records,
      added: records,
      duplicates_skipped: 0,
      rejected: 0,
    });
    const ours = await findSource(PHISHING)!.match(
      s.t.container.sourceContext,
      { domain: 'globex-pay.com' },
      { since: null, until: T0 },
      10,
    );
    expect(
      ours.hits.map((hit) => [hit.data.domain, hit.data.fuzzer, hit.data.first_seen, hit.data.origin]),
    ).toContainEqual(['globex-pay-support.com', 'dictionary', '2025-11-03T06:29:14.000Z', 'nrd']);
    if (!real) return;
    const result = await findSource(PHISHING)!.match(
      s.t.container.sourceContext,
      { domain: 'live.com' },
      { since: null, until: T0 },
      10,
    );
    // 0-live.com is an NRD phishing entry aimed at live.com: the brand joined to a number.
    expect(
      result.hits.map((hit) => [hit.data.domain, hit.data.fuzzer, hit.data.first_seen, hit.data.origin]),
    ).toContainEqual(['0-live.com', 'combosquatting', '2025-01-03T06:29:14.000Z', 'nrd']);
  });

  it('ingests an NRD list (plain and adblock lines) and a dnstwist scan, reporting bad records by line and record', async () => {
    files.nrd = s.file('nrd-14day.txt', nrdList);
    files.scan = s.file('acme-bank.com.json', dnstwistScan);
    await s.moveTo(T0 - 2 * HOUR);
    const nrd = await s.ingest('phishing', [files.nrd]);
    expect(nrd.summary).toMatchObject({ records: 10, added: 10, duplicates_skipped: 0, rejected: 2 });
    expect(nrd.lines).toEqual([
      '1 inputs (0 failed): 10 domains read, 10 added, 0 duplicates skipped, 2 rejected',
      `  rejected ${files.nrd} line 9: "not a domain!": not a valid domain name`,
      `  rejected ${files.nrd} line 10: "192.0.2.1": an IP address, not a domain`,
    ]);
    expect((await s.ingest('phishing', [files.nrd])).summary).toMatchObject({
      records: 10,
      added: 0,
      duplicates_skipped: 10,
    });

    await s.moveTo(T0 - HOUR);
    const scan = await s.ingest('phishing', [files.scan], 'dnstwist');
    // The original and the unregistered permutations are no observed domains; acme-bnak.com
    // was in the NRD list: a duplicate that gains the scan's registrar, addresses and MX.
    expect(scan.summary).toMatchObject({
      records: 3,
      added: 2,
      duplicates_skipped: 1,
      rejected: 2,
      unregistered_skipped: 1,
    });
    expect(scan.lines.slice(1)).toEqual([
      `  rejected ${files.scan} record 6: "acme_bank.com": not a valid domain name`,
      `  rejected ${files.scan} record 7: not an object`,
      '  1 unregistered permutations skipped (no DNS or WHOIS data)',
    ]);
    const broken = s.file('broken.json', '{"fuzzer": "addition"}');
    const failed = await s.ingest('phishing', [broken], 'dnstwist');
    expect(failed.failed).toBe(true);
    expect(failed.lines).toContain(`  error: ${broken}: file: not a dnstwist JSON result (an array of permutations)`);
  });

  it('a rule reports the lookalikes at creation with fuzzer, score and registrar, never the domain itself; email and signed webhook are delivered', async () => {
    await s.moveTo(T0);
    kit = await s.newKit();
    const created = await s.alice.created(
      sourceRule(kit, 'acme-bank.com lookalikes', PHISHING, { domain: 'acme-bank.com' }),
    );
    rule = created.id;
    expect(created).toMatchObject({ service: PHISHING, total_matches_count: 8, total_alerts_count: 1 });
    const match = await s.onlyMatch(rule);
    matchId = match.id;
    expect(match).toMatchObject({ total_hits: 8, window_start: null, window_end: iso(T0) });
    const hits = await s.hitsOf(matchId);
    // Newest first: the scan's new domains (an hour later), then the NRD list's, last line first.
    expect(Object.fromEntries(hits.map((hit) => [hit.domain, hit.fuzzer]))).toEqual({
      'xn--acme-bnk-4ya.com': 'homoglyph',
      'acmebank.com': 'omission',
      'acme-bank.com.login-verify.net': 'levelsquatting',
      'secure-acme-bank.net': 'combosquatting',
      'acme-bamk.com': 'homoglyph',
      'acme-bank.shop': 'tld-swap',
      'acmebank-secure.com': 'combosquatting',
      'acme-bnak.com': 'transposition',
    });
    expect(domains(hits).slice(2)).toEqual([
      'acme-bank.com.login-verify.net',
      'secure-acme-bank.net',
      'acme-bamk.com',
      'acme-bank.shop',
      'acmebank-secure.com',
      'acme-bnak.com',
    ]);
    expect(hits.find((hit) => hit.domain === 'acme-bnak.com')).toEqual({
      id: expect.any(Number),
      hit_key: expect.any(String),
      is_excluded: false,
      domain: 'acme-bnak.com',
      unicode: null,
      registrable: 'acme-bnak.com',
      watched: 'acme-bank.com',
      fuzzer: 'transposition',
      score: Math.round(90 * 0.7 + (8 / 9) * 20 + 5),
      distance: 1,
      brand_in_subdomain: false,
      registrar: 'Example Registrar, Inc.',
      ip: '198.51.100.7',
      ipv6: '2001:db8::7',
      name_servers: ['ns1.cheap-dns.example'],
      mx: ['mx.acme-bnak.com'],
      has_mx: true,
      country: 'Netherlands',
      origin: 'nrd',
      registered_at: '2026-03-08T00:00:00.000Z',
      first_seen: '2026-03-08T00:00:00.000Z',
      discovered_at: iso(T0 - 2 * HOUR),
    });
    expect(hits.find((hit) => hit.domain === 'xn--acme-bnk-4ya.com')).toMatchObject({
      unicode: 'acme-bànk.com',
      registrar: 'Demo Domains LLC',
      origin: 'dnstwist',
      distance: 1,
      has_mx: false,
    });
    expect(hits.find((hit) => hit.domain === 'acme-bank.com.login-verify.net')).toMatchObject({
      registrable: 'login-verify.net',
      brand_in_subdomain: true,
      first_seen: '2026-03-10T06:00:00.000Z',
      registrar: null,
      mx: [],
    });

    expect(await deliverPending(s.t)).toBe(2);
    const hooks = requestsTo(s.receiver, kit);
    expect(hooks).toHaveLength(1);
    expect(
      verifyAlertSystemSignature(kit.webhook!.secret, hooks[0]!.body, hooks[0]!.headers['x-alertsystem-signature']),
    ).toBe(true);
    expect(payloadOf(hooks[0]!)).toMatchObject({
      alert_rule_name: 'acme-bank.com lookalikes',
      service: 'Phishing domains',
      total_matches: 8,
    });
    expect(s.smtp.messages.filter((m) => m.to.includes(kit.recipient.email)).map((m) => m.parsed.html)).toEqual([
      expect.stringContaining('acme-bank.com lookalikes: 8 hits in Phishing domains'),
    ]);
  });

  it('hits filter by fuzzer, sort by score and exclude a domain', async () => {
    expect(domains(await s.hitsOf(matchId, { filter: 'fuzzer:combosquatting' }))).toEqual([
      'secure-acme-bank.net',
      'acmebank-secure.com',
    ]);
    expect(domains(await s.hitsOf(matchId, { filter: ['has_mx:true', 'country:netherlands'] }))).toEqual([
      'acme-bnak.com',
    ]);
    expect(domains(await s.hitsOf(matchId, { filter: 'origin:dnstwist' }))).toEqual([
      'acmebank.com',
      'xn--acme-bnk-4ya.com',
    ]);
    const scores = (await s.hitsOf(matchId, { sort: '-score' })).map((hit) => hit.score as number);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect((await s.hitsOf(matchId, { sort: '-score' }))[0]).toMatchObject({
      domain: 'xn--acme-bnk-4ya.com',
      fuzzer: 'homoglyph',
    });
    expect((await s.hitsOf(matchId, { sort: 'distance' }))[0]).toMatchObject({ distance: 0, fuzzer: 'tld-swap' });
    expectError(await s.alice.get(`${rulePaths.hits(matchId)}?filter=ip:198.51.100.7`), 400, 'validation_failed');

    expect((await s.alice.createExclusion(rule, { field: 'domain', value: 'acme-bank.shop' })).statusCode).toBe(201);
    expect((await s.alice.createExclusion(rule, { field: 'registrar', value: 'Demo Domains LLC' })).statusCode).toBe(
      201,
    );
    expect(domains(await s.hitsOf(matchId, { include_excluded: false }))).not.toContain('acme-bank.shop');
    expect(await s.alice.getJson(rulePaths.match(matchId))).toMatchObject({ excluded_hits: 2, new_hits: 6 });
    expect((await s.hitsOf(matchId)).find((hit) => hit.domain === 'acme-bank.shop')).toMatchObject({
      is_excluded: true,
    });
  });

  it('match counts every hit of the window and returns at most the limit', async () => {
    const result = await findSource(PHISHING)!.match(
      s.t.container.sourceContext,
      { domain: 'acme-bank.com' },
      { since: T0 - 2 * HOUR, until: T0 },
      1,
    );
    expect(result.total).toBe(2);
    expect(result.hits).toHaveLength(1);
    expect(result.hits[0]).toMatchObject({
      date: T0 - HOUR,
      key: expect.stringMatching(/^domain:(acmebank\.com|xn--acme-bnk-4ya\.com)$/),
    });
  });

  it("a dnstwist scan (ours, and the real one of youtube.com when ../shared/fixtures has it): every registered permutation is a hit with dnstwist's fuzzer", async () => {
    await s.moveTo(T0 + HOUR);
    const scan = path.join(FIXTURES, 'globex-pay.com.dnstwist.json');
    const ours = (
      JSON.parse(readFileSync(scan, 'utf8')) as { fuzzer: string; domain: string; dns_ns?: string[] }[]
    ).filter((entry) => entry.fuzzer !== '*original' && entry.dns_ns);
    expect((await s.ingest('phishing', [scan])).summary).toMatchObject({
      records: ours.length,
      added: ours.length,
      rejected: 0,
      unregistered_skipped: 1,
    });
    const found = await findSource(PHISHING)!.match(
      s.t.container.sourceContext,
      { domain: 'globex-pay.com' },
      { since: T0, until: T0 + HOUR },
      100,
    );
    expect(Object.fromEntries(found.hits.map((hit) => [hit.data.domain, hit.data.fuzzer]))).toEqual(
      Object.fromEntries(ours.map((entry) => [entry.domain, entry.fuzzer])),
    );
    if (!existsSync(DNSTWIST_FIXTURE)) return;
    const entries = (
      JSON.parse(readFileSync(DNSTWIST_FIXTURE, 'utf8')) as {
        fuzzer: string;
        domain: string;
        dns_mx?: string[];
        geoip?: string;
      }[]
    ).slice(1);
    const report = await s.ingest('phishing', [DNSTWIST_FIXTURE], 'dnstwist');
    expect(report.summary).toMatchObject({ records: 235, added: 235, rejected: 0, unregistered_skipped: 0 });
    const created = await s.alice.created(
      sourceRule(await s.newKit(), 'youtube.com lookalikes', PHISHING, { domain: 'youtube.com' }),
    );
    const match = await s.onlyMatch(created.id);
    expect(match.total_hits).toBe(235);
    const hits: HitView[] = [];
    for (let page = 1; page <= 3; page++)
      hits.push(...(await s.alice.hits(match.id, { page, page_size: 100 })).results);
    expect(Object.fromEntries(hits.map((hit) => [hit.domain, hit.fuzzer]))).toEqual(
      Object.fromEntries(entries.map((entry) => [entry.domain, entry.fuzzer])),
    );
    // dnstwist's `!ServFail` answers are no mail server.
    expect(hits.filter((hit) => hit.has_mx).length).toBe(
      entries.filter((entry) => entry.dns_mx?.some((mx) => !mx.startsWith('!'))).length,
    );
    expect(hits.find((hit) => hit.domain === 'youtubef.com')).toMatchObject({
      fuzzer: 'addition',
      has_mx: false,
      ip: '107.149.106.160',
      country: 'United States',
    });
    expect((await s.alice.hits(match.id, { filter: 'fuzzer:homoglyph', page_size: 100 })).count).toBe(36);
  });

  it('args are checked: a registrable domain', async () => {
    const fields = async (args: Record<string, unknown>) =>
      expectError(await s.alice.create(sourceRule(kit, 'bad args', PHISHING, args)), 400, 'validation_failed').fields;
    expect(await fields({ domain: 'www.acme-bank.com' })).toEqual([
      {
        field: 'args.domain',
        message:
          'must be a registrable domain: acme-bank.com, not www.acme-bank.com (its subdomains are covered) (rule 3)',
        rule: 3,
      },
    ]);
    expect(await fields({ domain: 'https://acme-bank.com/login' })).toEqual([
      { field: 'args.domain', message: expect.stringContaining('must be a domain name'), rule: 3 },
    ]);
    expect(await fields({ domain: 'acme-bank.com', brand: 'acme' })).toEqual([
      { field: 'args.brand', message: 'is not a parameter of Phishing domains (rule 1)', rule: 1 },
    ]);
  });

  it('the next tick reports only domains observed after the last run, through the batch matcher; a domain seen again is no new hit', async () => {
    files.late = s.file('nrd-late.txt', late);
    await s.moveTo(T0 + 2 * HOUR);
    expect((await s.ingest('phishing', [files.late])).summary).toMatchObject({
      records: 3,
      added: 2,
      duplicates_skipped: 1,
    });
    await s.moveTo(T0 + DAY);
    const tick = await tickAndDeliver(s.t);
    expect(tick).toMatchObject({ failed: 0 });
    const { results } = await s.alice.matches(rule, { page_size: 100 });
    expect(results).toHaveLength(2);
    expect(results[0]).toMatchObject({ total_hits: 1, window_start: iso(T0), window_end: iso(T0 + DAY) });
    expect(await s.hitsOf(results[0]!.id)).toEqual([
      expect.objectContaining({
        domain: 'acme-bannk.com',
        fuzzer: 'repetition',
        first_seen: '2026-03-10T10:30:00.000Z',
      }),
    ]);
    expect(payloadOf(requestsTo(s.receiver, kit)[1]!)).toMatchObject({ total_matches: 1 });
  });

  it('matchMany gives each rule what match gives it', async () => {
    const source = findSource(PHISHING)!;
    const context = s.t.container.sourceContext;
    const rules = [
      { ruleId: 1, args: { domain: 'acme-bank.com' }, since: T0 - 2 * HOUR },
      { ruleId: 2, args: { domain: 'youtube.com' }, since: T0 },
      { ruleId: 3, args: { domain: 'acme-bank.com' }, since: T0 + 3 * HOUR },
    ];
    const batch = await source.matchMany!(
      context,
      [...rules, { ruleId: 4, args: { domain: 'not a domain' }, since: T0 }],
      T0 + DAY,
      5,
    );
    // A rule stored with a domain the checks refuse finds nothing and stops no other.
    expect(batch.get(4)).toEqual({ hits: [], total: 0 });
    for (const rule of rules) {
      const one = await source.match(context, rule.args, { since: rule.since, until: T0 + DAY }, 5);
      expect(batch.get(rule.ruleId)).toEqual(one);
    }
    expect(batch.get(1)!.total).toBe(3);
    expect(batch.get(3)!.total).toBe(0);
  });

  it('reads a window of many pages in order, ties in discovered_at included, and keeps the newest', async () => {
    const context = s.t.container.sourceContext;
    // 12,000 domains over three instants (a page is 5,000): every 1,000th a lookalike.
    const batches = [0, 1, 2].map((batch) =>
      Array.from({ length: 4000 }, (_, i) => ({
        domain: i % 1000 === 7 ? `acme-bank-${batch}-${i}.org` : `filler-${batch}-${i}.example.com`,
        origin: 'certificate' as const,
      })),
    );
    for (const [batch, domains] of batches.entries()) {
      s.t.clock.set(new Date(T0 + 3 * DAY + batch * HOUR));
      expect(await recordObservedDomains(context, domains)).toEqual({ added: 4000, duplicates: 0, invalid: 0 });
    }
    const window = { since: T0 + 2 * DAY, until: T0 + 4 * DAY };
    const all = await findSource(PHISHING)!.match(context, { domain: 'acme-bank.com' }, window, 100);
    expect(all.total).toBe(12);
    expect(all.hits.map((hit) => hit.data.domain)).toEqual(
      [2, 1, 0].flatMap((batch) => [3007, 2007, 1007, 7].map((i) => `acme-bank-${batch}-${i}.org`)),
    );
    const newest = await findSource(PHISHING)!.match(context, { domain: 'acme-bank.com' }, window, 5);
    expect(newest).toEqual({ total: 12, hits: all.hits.slice(0, 5) });
    expect(all.hits.every((hit) => hit.data.fuzzer === 'combosquatting')).toBe(true);
  });

  it("another organization's rule and hits are 404", async () => {
    await s.mallory.relogin();
    expectError(await s.mallory.get(rulePaths.hits(matchId)), 404, 'not_found');
    expectError(await s.mallory.createExclusion(rule, { field: 'domain', value: 'acme-bnak.com' }), 404, 'not_found');
  });
});
