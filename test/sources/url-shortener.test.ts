import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findIngester, findSource } from '../../src/modules/sources/index.ts';
import { expectError } from '../support/http.ts';
import {
  createRulesApp,
  deliverPending,
  HOUR,
  iso,
  payloadOf,
  requestsTo,
  rulePaths,
  runsOf,
  sourceRule,
  tickAndDeliver,
  type DeliveryKit,
  type HitView,
} from '../support/rules-api.ts';
import type { TestApp } from '../support/test-app.ts';
import { repoRoot } from '../support/cli.ts';
import { sourceSuite } from '../support/source-suite.ts';
import { testEngine } from '../support/test-store.ts';
import { verifyAlertSystemSignature } from '../support/webhook-receiver.ts';

/**
 * The URL-shortener source end to end: URLTeam dumps (BEACON headers, two dumps concatenated,
 * a dump named after its shortener, one naming none) ingested through the real ingester on the
 * test app's store and manual clock, rules over HTTP for a domain and its subdomains, services
 * and a path, hits filtered, sorted and excluded, email and signed webhook delivered.
 */

const T0 = Date.parse('2026-03-10T09:00:00Z');
const DAY = 24 * HOUR;
const URL_SHORTENER = 15;

const beaconDump = [
  '#FORMAT: BEACON',
  '#PREFIX: http://v.gd/',
  '#HOMEPAGE: http://urlte.am/',
  '#TIMESTAMP: 2026-03-09T20:00:00.123456',
  '',
  'AcB7qz|https://secure.acme-bank.com/login?next=%2Faccounts',
  'b2|https://acme-bank.com/offers/spring',
  'c3|http://acme-bank.com.account-verify.example/login',
  'd4|notfound',
  'e5|https://www.example.org/a|b',
  'f6',
  'g7|https://ACME-BANK.COM/Login/Reset page',
  'h8|https://notacme-bank.com/login',
  'i9|https://bücher-acme.de/straße',
  // A second dump appended with cat: its own header.
  '#FORMAT: BEACON',
  '#PREFIX: https://bit.ly/',
  '#TIMESTAMP: 2026-03-09T21:00:00',
  '',
  '3xAcme|https://portal.acme-bank.com/secure/LOGIN.php',
].join('\n');

// No header: the file is named after its shortener. notfound/blocked are skipped.
const tinyurlDump = ['acme1|https://acme-bank.com/careers', 'blk|blocked', ''].join('\r\n');

const lateDump = [
  '#PREFIX: https://is.gd/',
  'Late1|https://mail.acme-bank.com/owa/',
  '#PREFIX: http://v.gd/',
  'AcB7qz|https://secure.acme-bank.com/login?next=%2Faccounts',
].join('\n');

describe(`sources: URL shorteners end to end (${testEngine})`, () => {
  const s = sourceSuite('short');
  const files: Record<string, string> = {};

  beforeAll(() => {
    for (const [name, text] of [
      ['0001__.txt', beaconDump],
      ['tinyurl.com.txt', tinyurlDump],
      ['shortener.txt', 'x1|https://acme-bank.com/\n'],
      ['late.txt', lateDump],
    ] as const) {
      files[name] = path.join(s.dir, name);
      writeFileSync(files[name], text);
    }
  });
  const ingest = (file: string) => s.ingest('url_shortener', [file]);
  const codes = (hits: HitView[]) => hits.map((hit) => hit.shortcode);
  const codesOfRule = async (name: string, args: Record<string, unknown>) => {
    const rule = await s.alice.created(sourceRule(await s.newKit(), name, URL_SHORTENER, args));
    return rule.total_matches_count === 0 ? [] : codes(await s.hitsOf((await s.onlyMatch(rule.id)).id)).sort();
  };

  let domainRule: number;
  let domainKit: DeliveryKit;
  let domainMatch: number;

  it('ingests BEACON dumps and a dump named after its shortener; a dump naming none fails', async () => {
    await s.moveTo(T0 - 2 * HOUR);
    const beacon = await ingest(files['0001__.txt']!);
    expect(beacon.failed).toBe(false);
    expect(beacon.summary).toMatchObject({
      inputs: 1,
      failed: 0,
      records: 8,
      added: 8,
      duplicates_skipped: 0,
      rejected: 1,
      pseudo_targets_skipped: 1,
    });
    expect(beacon.lines).toEqual([
      '1 inputs (0 failed): 8 links read, 8 added, 0 duplicates skipped, 1 rejected; 1 notfound/blocked skipped',
      `  rejected ${files['0001__.txt']} line 11: expected shortcode|long_url`,
    ]);

    await s.moveTo(T0 - HOUR);
    expect((await ingest(files['tinyurl.com.txt']!)).summary).toMatchObject({
      records: 1,
      added: 1,
      rejected: 0,
      pseudo_targets_skipped: 1,
    });

    const unnamed = await ingest(files['shortener.txt']!);
    expect(unnamed.failed).toBe(true);
    expect(unnamed.summary).toMatchObject({ failed: 1, added: 0 });
    expect(unnamed.lines[1]).toBe(
      `  error: ${files['shortener.txt']}: line 1: no shortener: the dump has no #PREFIX: header and neither its file nor its folder is named after a host; give it with --shortener v.gd (?shortener=v.gd for POST /ingest/url_shortener/), or add "#PREFIX: https://v.gd/" before the links`,
    );
  });

  it('a domain rule reports the links to it and its subdomains, newest first; email and signed webhook are delivered', async () => {
    await s.moveTo(T0);
    domainKit = await s.newKit();
    const rule = await s.alice.created(
      sourceRule(domainKit, 'Acme short links', URL_SHORTENER, { domain: 'acme-bank.com' }),
    );
    domainRule = rule.id;
    expect(rule).toMatchObject({
      service: URL_SHORTENER,
      last_run: iso(T0),
      total_matches_count: 5,
      total_alerts_count: 1,
    });
    const match = await s.onlyMatch(rule.id);
    domainMatch = match.id;
    expect(match).toMatchObject({ total_hits: 5, window_start: null, window_end: iso(T0) });

    const hits = await s.hitsOf(match.id);
    // Not the lookalike acme-bank.com.account-verify.example, nor notacme-bank.com.
    expect(codes(hits)).toEqual(['acme1', '3xAcme', 'g7', 'b2', 'AcB7qz']);
    expect(hits.at(-1)).toEqual({
      id: expect.any(Number),
      hit_key: expect.any(String),
      is_excluded: false,
      short_url: 'http://v.gd/AcB7qz',
      shortcode: 'AcB7qz',
      service: 'v.gd',
      target_url: 'https://secure.acme-bank.com/login?next=%2Faccounts',
      target_host: 'secure.acme-bank.com',
      target_domain: 'acme-bank.com',
      crawled_at: '2026-03-09T20:00:00.123Z',
      discovered_at: iso(T0 - 2 * HOUR),
    });
    expect(hits[0]).toMatchObject({
      short_url: 'https://tinyurl.com/acme1',
      service: 'tinyurl.com',
      crawled_at: null,
      discovered_at: iso(T0 - HOUR),
    });
    expect(hits[1]).toMatchObject({
      short_url: 'https://bit.ly/3xAcme',
      service: 'bit.ly',
      crawled_at: '2026-03-09T21:00:00.000Z',
    });
    expect(hits[2]).toMatchObject({
      target_url: 'https://ACME-BANK.COM/Login/Reset page',
      target_host: 'acme-bank.com',
    });

    expect(await deliverPending(s.t)).toBe(2);
    const hooks = requestsTo(s.receiver, domainKit);
    expect(hooks).toHaveLength(1);
    expect(
      verifyAlertSystemSignature(
        domainKit.webhook!.secret,
        hooks[0]!.body,
        hooks[0]!.headers['x-alertsystem-signature'],
      ),
    ).toBe(true);
    expect(payloadOf(hooks[0]!)).toMatchObject({
      alert_rule_name: 'Acme short links',
      service: 'URL shorteners',
      total_matches: 5,
      excluded_matches: 0,
    });
    const mails = s.smtp.messages.filter((m) => m.to.includes(domainKit.recipient.email));
    expect(mails).toHaveLength(1);
    expect(mails[0]!.parsed.html).toContain('Acme short links: 5 hits in URL shorteners');
  });

  it('hits filter, sort and exclude by the declared fields', async () => {
    expect(codes(await s.hitsOf(domainMatch, { filter: 'service:V.GD' }))).toEqual(['g7', 'b2', 'AcB7qz']);
    expect(codes(await s.hitsOf(domainMatch, { filter: ['service:v.gd', 'target_host:acme-bank.com'] }))).toEqual([
      'g7',
      'b2',
    ]);
    expect(await s.hitsOf(domainMatch, { filter: 'target_domain:acme-bank.com' })).toHaveLength(5);

    expect((await s.hitsOf(domainMatch, { sort: 'service' })).map((hit) => hit.service)).toEqual([
      'bit.ly',
      'tinyurl.com',
      'v.gd',
      'v.gd',
      'v.gd',
    ]);
    expect((await s.hitsOf(domainMatch, { sort: '-target_host' })).map((hit) => hit.target_host)[0]).toBe(
      'secure.acme-bank.com',
    );
    expect(codes(await s.hitsOf(domainMatch, { sort: 'crawled_at' }))[0]).toBe('acme1');
    expect(codes(await s.hitsOf(domainMatch, { sort: 'discovered_at' })).at(-1)).toBe('acme1');

    expectError(await s.alice.get(`${rulePaths.hits(domainMatch)}?filter=shortcode:b2`), 400, 'validation_failed');
    expectError(await s.alice.get(`${rulePaths.hits(domainMatch)}?sort=target_url`), 400, 'validation_failed');

    const byService = await s.alice.createExclusion(domainRule, { field: 'service', value: 'TinyURL.com' });
    expect(byService.statusCode, byService.body).toBe(201);
    const byLink = await s.alice.createExclusion(domainRule, { field: 'short_url', value: 'http://v.gd/b2' });
    expect(byLink.statusCode, byLink.body).toBe(201);
    expect(codes(await s.hitsOf(domainMatch, { include_excluded: false }))).toEqual(['3xAcme', 'g7', 'AcB7qz']);
    expect(await s.alice.getJson(rulePaths.match(domainMatch))).toMatchObject({ excluded_hits: 2, new_hits: 3 });
    for (const { id } of await s.alice.exclusions(domainRule))
      expect((await s.alice.deleteExclusion(id)).statusCode).toBe(204);
    expectError(
      await s.alice.createExclusion(domainRule, { field: 'target_url', value: 'x' }),
      400,
      'validation_failed',
    );
  });

  it('narrows by a subdomain, services and a path; IDN domains are matched in punycode', async () => {
    expect(
      await codesOfRule('Acme logins', {
        domain: 'acme-bank.com',
        services: ['bit.ly', 'v.gd'],
        path_contains: '/login',
      }),
    ).toEqual(['3xAcme', 'AcB7qz', 'g7']);
    expect(await codesOfRule('Acme secure host', { domain: 'Secure.Acme-Bank.com' })).toEqual(['AcB7qz']);
    expect(await codesOfRule('Acme on www.bit.ly', { domain: 'acme-bank.com', services: ['www.bit.ly'] })).toEqual([
      '3xAcme',
    ]);
    expect(await codesOfRule('Acme reset page', { domain: 'acme-bank.com', path_contains: 'RESET PAGE' })).toEqual([
      'g7',
    ]);
    expect(await codesOfRule('IDN', { domain: 'BÜCHER-acme.de' })).toEqual(['i9']);
    expect(await codesOfRule('nobody', { domain: 'acme-bank.net' })).toEqual([]);
  });

  it('args are checked: a domain name and shortener host names', async () => {
    const kit = await s.newKit();
    const fields = async (args: Record<string, unknown>) =>
      expectError(await s.alice.create(sourceRule(kit, 'bad args', URL_SHORTENER, args)), 400, 'validation_failed')
        .fields;
    expect(await fields({ domain: 'acme bank' })).toEqual([
      {
        field: 'args.domain',
        message: 'must be a domain name such as acme-bank.com (not a valid domain name) (rule 3)',
        rule: 3,
      },
    ]);
    expect(await fields({ domain: '10.0.0.1' })).toEqual([
      {
        field: 'args.domain',
        message: 'must be a domain name such as acme-bank.com (an IP address, not a domain) (rule 3)',
        rule: 3,
      },
    ]);
    expect(await fields({ domain: 'acme-bank.com', services: ['bit.ly', 'tiny url'] })).toEqual([
      { field: 'args.services[1]', message: 'must be a shortener host name such as bit.ly (rule 3)', rule: 3 },
    ]);
  });

  it('the next tick reports only links stored since the last run; re-ingesting adds nothing', async () => {
    await s.moveTo(T0 + 2 * HOUR);
    expect((await ingest(files['late.txt']!)).summary).toMatchObject({ records: 2, added: 1, duplicates_skipped: 1 });

    // The floor is weekly: the rule runs again a week later.
    await s.moveTo(T0 + 7 * DAY);
    await tickAndDeliver(s.t);
    const { results } = await s.alice.matches(domainRule, { page_size: 100 });
    expect(results).toHaveLength(2);
    expect(results[0]).toMatchObject({ total_hits: 1, window_start: iso(T0), window_end: iso(T0 + 7 * DAY) });
    expect(await s.hitsOf(results[0]!.id)).toEqual([
      expect.objectContaining({
        short_url: 'https://is.gd/Late1',
        target_host: 'mail.acme-bank.com',
        discovered_at: iso(T0 + 2 * HOUR),
      }),
    ]);
    expect(payloadOf(requestsTo(s.receiver, domainKit)[1]!)).toMatchObject({ total_matches: 1 });

    await s.moveTo(T0 + 7 * DAY + HOUR);
    for (const name of ['0001__.txt', 'tinyurl.com.txt', 'late.txt']) {
      const again = await ingest(files[name]!);
      expect(again.summary, name).toMatchObject({ added: 0, duplicates_skipped: again.summary.records });
    }
    await s.moveTo(T0 + 14 * DAY);
    await tickAndDeliver(s.t);
    expect((await s.alice.matches(domainRule)).results).toHaveLength(2);
    expect((await runsOf(s.t, domainRule)).at(-1)).toMatchObject({ status: 'empty', window_end: T0 + 14 * DAY });
  });

  it("another organization's rule, match and hits are 404", async () => {
    await s.mallory.relogin();
    expectError(await s.mallory.get(rulePaths.matches(domainRule)), 404, 'not_found');
    expectError(await s.mallory.get(rulePaths.hits(domainMatch)), 404, 'not_found');
  });
});

describe(`sources: the URL-shortener demo data (${testEngine})`, () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createRulesApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  // test/sources/demo-examples.test.ts checks that the catalog examples find these links.
  it('is dated before now, and a second demo adds nothing', async () => {
    const now = t.clock.now().getTime();
    const load = () => findSource(URL_SHORTENER)!.demo!(t.container.sourceContext, now);
    expect(await load()).toContain(': 6 synthetic URL-shortener links added');
    expect(await load()).toContain(': 0 synthetic URL-shortener links added');
    const found = await findSource(URL_SHORTENER)!.match(
      t.container.sourceContext,
      { domain: 'acme-bank.com' },
      { since: null, until: now },
      10,
    );
    expect(found.hits.map((hit) => hit.data.target_host)).toEqual([
      'secure.acme-bank.com',
      'acme-bank.com',
      'www.acme-bank.com',
    ]);
    expect(found.hits.every((hit) => hit.date < now)).toBe(true);
  });
});

// Real terroroftinytown test definitions (../shared/fixtures/SOURCES.md), read where they are, never copied here.
const FIXTURES = path.resolve(repoRoot, '..', 'shared', 'fixtures', 'urlteam');

describe(`sources: the terroroftinytown samples (${testEngine})`, () => {
  let t: TestApp;
  let dir: string;

  beforeAll(async () => {
    t = await createRulesApp();
    dir = mkdtempSync(path.join(tmpdir(), 'dragnet-urlteam-'));
  });
  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('name no shortener as they are; named after theirs (in a scratch folder), they are stored and found (where the samples are present)', async () => {
    if (!existsSync(FIXTURES)) return;
    const ingest = (file: string) =>
      findIngester('url_shortener')!.run(t.container.sourceContext, [file], { format: 'urlteam' });
    const asIs = await ingest(path.join(FIXTURES, 'vgd.txt'));
    expect(asIs.failed).toBe(true);
    expect(asIs.tally.errors[0]!.reason).toMatch(/: line 1: no shortener: /);

    const vgd = path.join(dir, 'v.gd.txt');
    const snipurl = path.join(dir, 'snipurl.com.txt');
    copyFileSync(path.join(FIXTURES, 'vgd.txt'), vgd);
    copyFileSync(path.join(FIXTURES, 'snipurl.txt'), snipurl);
    expect((await ingest(vgd)).summary).toMatchObject({ records: 5, added: 5, rejected: 0, pseudo_targets_skipped: 1 });
    expect((await ingest(snipurl)).summary).toMatchObject({
      records: 10,
      added: 10,
      rejected: 0,
      pseudo_targets_skipped: 5,
    });
    expect((await ingest(snipurl)).summary).toMatchObject({ added: 0, duplicates_skipped: 10 });

    const found = async (args: Record<string, unknown>) => {
      const { hits } = await findSource(URL_SHORTENER)!.match(
        t.container.sourceContext,
        args,
        { since: null, until: t.clock.now().getTime() },
        10,
      );
      return hits.map((hit) => hit.data.short_url);
    };
    expect(await found({ domain: 'archive.org' })).toEqual(['https://v.gd/Xs2bkX']);
    expect(await found({ domain: 'symantec.com', path_contains: 'ent-security.nsf' })).toEqual([
      'https://snipurl.com/6cw',
    ]);
    expect(await found({ domain: 'avast.com', services: ['snipurl.com'] })).toEqual(['https://snipurl.com/278ieh2']);
  });
});

describe(`sources: URLTeam dumps as released (${testEngine})`, () => {
  let t: TestApp;
  const folder = path.join(repoRoot, 'test', 'fixtures', 'url_shortener');

  beforeAll(async () => {
    t = await createRulesApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  const ingest = (file: string, shortener?: string) =>
    findIngester('url_shortener')!.run(t.container.sourceContext, [file], { format: 'urlteam', shortener });
  const found = async (args: Record<string, unknown>) => {
    const { hits } = await findSource(URL_SHORTENER)!.match(
      t.container.sourceContext,
      args,
      { since: null, until: t.clock.now().getTime() },
      20,
    );
    return Object.fromEntries(hits.map((hit) => [hit.data.short_url, hit.data.target_url]));
  };

  it('keeps every URL byte: UTF-8 as text, the bytes of other encodings percent-encoded, never U+FFFD', async () => {
    expect((await ingest(path.join(folder, 'v.gd-urlteam-beacon.txt'))).summary).toMatchObject({
      records: 3,
      added: 3,
      rejected: 0,
      pseudo_targets_skipped: 2,
    });
    expect(await found({ domain: 'fixture-cafe.com', services: ['v.gd'] })).toEqual({
      // latin-1 é and è
      'https://v.gd/Qm3xTz': 'http://www.fixture-cafe.com/menu/caf%E9-cr%E8me.html',
      'https://v.gd/Qm3xU1': 'http://forum.fixture-cafe.com/viewtopic.php?t=42&highlight=résumé',
      'https://v.gd/Qm3xU2': 'http://downloads.fixture-cafe.com/get.php?f=setup.exe|mirror2',
    });
  });

  it("a dump without a header takes its shortener from its folder (the exporter's layout), else from --shortener, else fails naming the option", async () => {
    expect((await ingest(path.join(folder, 'tinyurl.com'))).summary).toMatchObject({
      inputs: 1,
      records: 2,
      added: 2,
      pseudo_targets_skipped: 1,
    });
    expect(await found({ domain: 'fixture-cafe.com', services: ['tinyurl.com'] })).toEqual({
      // cp437 é
      'https://tinyurl.com/2f8kq1': 'http://fixture-cafe.com/r%82servation?table=4',
      'https://tinyurl.com/2f8kq2': 'http://fixture-cafe.com/contact',
    });

    const headerless = path.join(folder, 'export', '0a.txt');
    const unnamed = await ingest(headerless);
    expect(unnamed.failed).toBe(true);
    expect(unnamed.tally.errors[0]!.reason).toMatch(
      /: line 1: no shortener: .* give it with --shortener v\.gd \(\?shortener=v\.gd for POST \/ingest\/url_shortener\/\)/,
    );
    expect((await ingest(headerless, 'https://is.gd/')).summary).toMatchObject({ records: 2, added: 2 });
    expect(await found({ domain: 'fixture-cafe.com', services: ['is.gd'] })).toEqual({
      'https://is.gd/0a91': 'https://fixture-cafe.com/login?next=%2Faccount',
      'https://is.gd/0a92': 'http://fixture-cafe.com/%A9-2009.html',
    });
    const notADump = await ingest(path.join(repoRoot, 'test', 'fixtures', 'ransomware', 'posts.json'), 'v.gd');
    expect(notADump.tally.errors[0]!.reason).toMatch(
      /: format: is in none of the formats url_shortener reads: urlteam \(URLTeam terroroftinytown releases: /,
    );
    await expect(ingest(headerless, 'not a host')).rejects.toThrow(
      'shortener: must be a shortener host or URL, such as v.gd or https://v.gd/',
    );
  });
});
