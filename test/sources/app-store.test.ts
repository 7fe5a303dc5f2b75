import { writeFileSync } from 'node:fs';
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
import { sourceSuite } from '../support/source-suite.ts';
import { testEngine } from '../support/test-store.ts';
import { verifyAlertSystemSignature } from '../support/webhook-receiver.ts';

/**
 * The app-store source end to end: an iTunes Search API response and google-play-scraper JSON
 * Lines ingested through the real ingester on the test app's store and manual clock, rules over
 * HTTP, hits filtered, sorted and excluded, email and signed webhook delivered. No fixture of
 * these formats exists in /work/shared/fixtures: the files are written here in the shapes
 * Apple's iTunes Search API documentation and google-play-scraper's README give. Every app and
 * developer is made up.
 */

const T0 = Date.parse('2026-03-10T09:00:00Z');
const DAY = 24 * HOUR;
const WEEK = 7 * DAY;

const itunesApp = (
  trackId: number,
  trackName: string,
  bundleId: string | undefined,
  artistName: string,
  extra: Record<string, unknown> = {},
) => ({
  wrapperType: 'software',
  kind: 'software',
  trackId,
  trackName,
  bundleId,
  artistId: trackId + 1_000_000,
  artistName,
  sellerName: artistName,
  trackViewUrl: `https://apps.apple.com/us/app/id${trackId}?uo=4`,
  version: '1.0',
  averageUserRating: 4,
  userRatingCount: 10,
  releaseDate: '2025-06-01T07:00:00Z',
  currentVersionReleaseDate: '2026-01-15T10:00:00Z',
  description: 'An app.',
  primaryGenreName: 'Finance',
  price: 0,
  currency: 'USD',
  ...extra,
});

const itunesResponse = (results: unknown[]) => JSON.stringify({ resultCount: results.length, results }, null, 2);

const searchText = itunesResponse([
  itunesApp(1488200001, 'Acme Bank', 'com.acmebank.mobile', 'Acme Bank plc', { version: '8.12.1' }),
  itunesApp(1488200003, 'Acme Bnak: Mobile Banking', 'com.fastmobile.bankingpro', 'Fast Mobile Ltd', {
    averageUserRating: 2.5,
    userRatingCount: 17,
  }),
  itunesApp(1488200004, 'Budget Buddy', 'com.buddyapps.budget', 'Buddy Apps', {
    description: 'Import your statements from Acme Bank and 200 other banks.',
    primaryGenreName: 'Productivity',
  }),
  { ...itunesApp(1488200005, 'Acme Bank for Mac', 'com.fakemac.acmebank', 'Mac Tools'), kind: 'mac-software' },
  itunesApp(1488200006, 'Acme Bank Lite', undefined, 'Nobody'),
  itunesApp(1488200007, 'Photo Frame', 'com.frames.photo', 'Frames Inc', { primaryGenreName: 'Photo & Video' }),
]);

const playApp = (appId: string, title: string, developer: string, extra: Record<string, unknown> = {}) => ({
  title,
  description: 'An app.',
  summary: 'A summary.',
  installs: '1,000+',
  minInstalls: 1000,
  score: 4,
  scoreText: '4.0',
  ratings: 20,
  free: true,
  developer,
  developerId: developer.replace(/ /g, '+'),
  genre: 'Finance',
  genreId: 'FINANCE',
  released: 'Jun 8, 2024',
  updated: T0 - 30 * DAY,
  version: '1.0.0',
  appId,
  url: `https://play.google.com/store/apps/details?id=${appId}&hl=en&gl=us`,
  ...extra,
});

const jsonl = (lines: unknown[]) =>
  lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n');

const WALLET = playApp('com.wallettools.acmebank', 'AcmeBank Wallet', 'Wallet Tools', {
  installs: '10,000+',
  minInstalls: 10000,
  score: 4.18,
  ratings: 311,
  version: '3.0.2',
  updated: 1767225600000,
});
const playText = jsonl([
  WALLET,
  playApp('com.acmebank.mobile', 'Acme Bank', 'ACME BANK PLC', { minInstalls: 1_000_000 }),
  playApp('com.acmebank.securelogin', 'Secure Login', 'Login Studio', { minInstalls: 5000 }),
  '{"appId": "com.broken.app", "title": ',
  playApp('com.bankhelper.app', 'Bank Helper', 'Acme Bank Support Team', { minInstalls: 100 }),
  { appId: 'com.untitled.app' },
  '',
  playApp('com.pocketledger.app', 'Pocket Ledger', 'Ledger Labs', { minInstalls: 50_000, genre: 'Productivity' }),
  playApp('com.pondgames.frogjump', 'Frog Jump', 'Pond Games', { genre: 'Arcade' }),
]);

// A week later: a new version of a reported app, a known app whose new version mentions the
// brand, and a new lookalike.
const lateText = jsonl([
  { ...WALLET, version: '3.1.0', minInstalls: 50_000 },
  playApp('com.pocketledger.app', 'Pocket Ledger', 'Ledger Labs', {
    minInstalls: 50_000,
    genre: 'Productivity',
    version: '2.0.0',
    description: 'New: sync your Acme Bank accounts.',
  }),
  playApp('com.paylab.acmebamkpay', 'Acme Bamk Pay', 'Pay Lab', { minInstalls: 10 }),
]);

describe(`sources: app stores end to end (${testEngine})`, () => {
  const s = sourceSuite('apps');
  const files: Record<string, string> = {};

  beforeAll(() => {
    for (const [name, text] of [
      ['itunes-search.json', searchText],
      ['play-apps.jsonl', playText],
      ['play-late.jsonl', lateText],
    ] as const) {
      files[name] = path.join(s.dir, name);
      writeFileSync(files[name], text);
    }
  });
  const ingest = (file: string, format?: string) => s.ingest('app_store', [file], format);
  const matchesOf = async (ruleId: number) => (await s.alice.matches(ruleId, { page_size: 100 })).results;
  const names = (hits: HitView[]) => hits.map((hit) => hit.name);

  let rule: number;
  let kit: DeliveryKit;
  let firstMatch: number;

  it('ingests an iTunes response and Play JSON Lines, reporting each bad record by its place', async () => {
    await s.moveTo(T0 - 2 * HOUR);
    const itunes = await ingest(files['itunes-search.json']!);
    expect(itunes.failed).toBe(false);
    expect(itunes.summary).toMatchObject({ inputs: 1, records: 4, added: 4, duplicates_skipped: 0, rejected: 2 });
    expect(itunes.lines.slice(1)).toEqual([
      `  rejected ${files['itunes-search.json']} result 4: not an iOS app (kind "mac-software"); search with entity=software`,
      `  rejected ${files['itunes-search.json']} result 5: bundleId is missing or not an app id`,
    ]);

    await s.moveTo(T0 - HOUR);
    const play = await ingest(files['play-apps.jsonl']!);
    expect(play.summary).toMatchObject({ records: 6, added: 6, rejected: 2 });
    expect(play.lines.slice(1)).toEqual([
      `  rejected ${files['play-apps.jsonl']} line 4: not valid JSON`,
      `  rejected ${files['play-apps.jsonl']} line 6: title is missing`,
    ]);
  });

  it('a rule reports the apps using the brand that are not its own, newest first; email and signed webhook are delivered', async () => {
    await s.moveTo(T0);
    kit = await s.newKit();
    const created = await s.alice.created(
      sourceRule(kit, 'Acme Bank apps', 13, { query: 'Acme Bank', official_developers: ['Acme Bank plc'] }),
    );
    rule = created.id;
    expect(created).toMatchObject({
      service: 13,
      frequency: 'weekly',
      last_run: iso(T0),
      total_matches_count: 5,
      total_alerts_count: 1,
    });
    const [match] = await matchesOf(rule);
    firstMatch = match!.id;
    expect(match).toMatchObject({ total_hits: 5, stored_hits: 5, window_start: null, window_end: iso(T0) });

    const hits = await s.hitsOf(firstMatch);
    // The Play apps were stored an hour after the iTunes ones.
    expect(hits.map((hit) => [hit.platform, hit.name, hit.matched_on, hit.lookalike])).toEqual([
      ['android', 'Bank Helper', 'developer', false],
      ['android', 'Secure Login', 'app_id', false],
      ['android', 'AcmeBank Wallet', 'name', false],
      ['ios', 'Budget Buddy', 'description', false],
      ['ios', 'Acme Bnak: Mobile Banking', 'name', true],
    ]);
    expect(hits.find((hit) => hit.name === 'AcmeBank Wallet')).toEqual({
      id: expect.any(Number),
      hit_key: expect.any(String),
      is_excluded: false,
      app_id: 'com.wallettools.acmebank',
      name: 'AcmeBank Wallet',
      developer: 'Wallet Tools',
      developer_id: 'Wallet+Tools',
      platform: 'android',
      store: 'google_play',
      version: '3.0.2',
      url: 'https://play.google.com/store/apps/details?id=com.wallettools.acmebank&hl=en&gl=us',
      installs: 10000,
      rating: 4.18,
      rating_count: 311,
      genre: 'Finance',
      released_at: '2024-06-08T00:00:00.000Z',
      updated_at: iso(1767225600000),
      matched_on: 'name',
      lookalike: false,
      reason: 'name "AcmeBank Wallet" contains "Acme Bank"',
      discovered_at: iso(T0 - HOUR),
    });
    expect(hits.find((hit) => hit.platform === 'ios' && hit.lookalike)).toMatchObject({
      app_id: 'com.fastmobile.bankingpro',
      developer: 'Fast Mobile Ltd',
      developer_id: '1489200003',
      store: 'app_store',
      url: 'https://apps.apple.com/us/app/id1488200003?uo=4',
      installs: null,
      rating: 2.5,
      reason: 'name "Acme Bnak: Mobile Banking" looks like "Acme Bank" ("acme bnak", 1 edit away)',
      discovered_at: iso(T0 - 2 * HOUR),
    });

    expect(await deliverPending(s.t)).toBe(2);
    const hooks = requestsTo(s.receiver, kit);
    expect(hooks).toHaveLength(1);
    expect(
      verifyAlertSystemSignature(kit.webhook!.secret, hooks[0]!.body, hooks[0]!.headers['x-alertsystem-signature']),
    ).toBe(true);
    expect(payloadOf(hooks[0]!)).toMatchObject({
      alert_rule_name: 'Acme Bank apps',
      service: 'App stores',
      total_matches: 5,
      excluded_matches: 0,
    });
    const mails = s.smtp.messages.filter((m) => m.to.includes(kit.recipient.email));
    expect(mails).toHaveLength(1);
    expect(mails[0]!.parsed.html).toContain('Acme Bank apps: 5 hits in App stores');
  });

  it('hits filter, sort and exclude by the declared fields', async () => {
    expect(names(await s.hitsOf(firstMatch, { filter: 'lookalike:true' }))).toEqual(['Acme Bnak: Mobile Banking']);
    expect(names(await s.hitsOf(firstMatch, { filter: ['platform:IOS', 'matched_on:description'] }))).toEqual([
      'Budget Buddy',
    ]);
    expect(names(await s.hitsOf(firstMatch, { filter: 'genre:productivity' }))).toEqual(['Budget Buddy']);
    expect(names(await s.hitsOf(firstMatch, { filter: 'platform:android', sort: '-installs' }))).toEqual([
      'AcmeBank Wallet',
      'Secure Login',
      'Bank Helper',
    ]);
    expect(names(await s.hitsOf(firstMatch, { sort: 'name' }))).toEqual([
      'Acme Bnak: Mobile Banking',
      'AcmeBank Wallet',
      'Bank Helper',
      'Budget Buddy',
      'Secure Login',
    ]);
    expectError(await s.alice.get(`${rulePaths.hits(firstMatch)}?filter=reason:x`), 400, 'validation_failed');

    const exclusion = await s.alice.createExclusion(rule, { field: 'developer', value: 'wallet tools' });
    expect(exclusion.statusCode, exclusion.body).toBe(201);
    expect(names(await s.hitsOf(firstMatch, { include_excluded: false }))).not.toContain('AcmeBank Wallet');
    expect(await s.alice.getJson(rulePaths.match(firstMatch))).toMatchObject({ excluded_hits: 1, new_hits: 4 });
    for (const { id } of await s.alice.exclusions(rule))
      expect((await s.alice.deleteExclusion(id)).statusCode).toBe(204);
    expectError(await s.alice.createExclusion(rule, { field: 'reason', value: 'x' }), 400, 'validation_failed');
  });

  it("narrows by platform; without official developers the brand's own apps are reported too", async () => {
    const kit2 = await s.newKit();
    const run = async (name: string, args: Record<string, unknown>) => {
      const created = await s.alice.created(sourceRule(kit2, name, 13, args));
      if (created.total_matches_count === 0) return [];
      const [match] = await matchesOf(created.id);
      return names(await s.hitsOf(match!.id, { sort: 'name' }));
    };
    expect(
      await run('ios only', { query: 'acme bank', platforms: ['ios'], official_developers: ['Acme Bank plc'] }),
    ).toEqual(['Acme Bnak: Mobile Banking', 'Budget Buddy']);
    expect(await run('no officials', { query: 'AcmeBank' })).toEqual([
      'Acme Bank',
      'Acme Bank',
      'Acme Bnak: Mobile Banking',
      'AcmeBank Wallet',
      'Bank Helper',
      'Budget Buddy',
      'Secure Login',
    ]);
    // An official developer by id: the iOS "Acme Bank" (artist id 1489200001) is left out, the Play one is not.
    expect(
      await run('official by id', {
        query: 'Acme Bank',
        platforms: ['ios', 'android'],
        official_developers: ['1489200001'],
      }),
    ).toEqual([
      'Acme Bank',
      'Acme Bnak: Mobile Banking',
      'AcmeBank Wallet',
      'Bank Helper',
      'Budget Buddy',
      'Secure Login',
    ]);
    expect(await run('another brand', { query: 'Northwind' })).toEqual([]);
  });

  it('args are checked: a query with three letters or digits, official developers with one', async () => {
    const kit3 = await s.newKit();
    const fields = async (args: Record<string, unknown>) =>
      expectError(await s.alice.create(sourceRule(kit3, 'bad args', 13, args)), 400, 'validation_failed').fields;
    expect(await fields({ query: '--ab--' })).toEqual([
      { field: 'args.query', message: 'must have at least 3 letters or digits (rule 3)', rule: 3 },
    ]);
    expect(
      await fields({ query: 'Acme Bank', official_developers: ['Acme Bank plc', '+++'], platforms: ['windows'] }),
    ).toEqual([{ field: 'args.platforms[0]', message: 'must be one of: android, ios (rule 3)', rule: 3 }]);
    expect(await fields({ query: 'Acme Bank', official_developers: ['Acme Bank plc', '+++'] })).toEqual([
      { field: 'args.official_developers[1]', message: 'must have a letter or digit (rule 3)', rule: 3 },
    ]);
  });

  it('a week later reports only apps first using the brand since: not a new version of a reported app; re-ingesting adds nothing', async () => {
    await s.moveTo(T0 + 2 * HOUR);
    expect((await ingest(files['play-late.jsonl']!)).summary).toMatchObject({
      records: 3,
      added: 3,
      duplicates_skipped: 0,
    });

    await s.moveTo(T0 + WEEK);
    await tickAndDeliver(s.t);
    const matches = await matchesOf(rule);
    expect(matches).toHaveLength(2);
    expect(matches[0]).toMatchObject({ total_hits: 2, window_start: iso(T0), window_end: iso(T0 + WEEK) });
    const hits = await s.hitsOf(matches[0]!.id);
    expect(hits.map((hit) => [hit.name, hit.version, hit.matched_on, hit.lookalike])).toEqual([
      ['Acme Bamk Pay', '1.0.0', 'name', true],
      ['Pocket Ledger', '2.0.0', 'description', false],
    ]);
    expect(payloadOf(requestsTo(s.receiver, kit)[1]!)).toMatchObject({ total_matches: 2 });

    await s.moveTo(T0 + WEEK + HOUR);
    for (const name of ['itunes-search.json', 'play-apps.jsonl', 'play-late.jsonl']) {
      const again = await ingest(files[name]!);
      expect(again.summary, name).toMatchObject({ added: 0, duplicates_skipped: again.summary.records });
    }
    await s.moveTo(T0 + 2 * WEEK);
    await tickAndDeliver(s.t);
    expect(await matchesOf(rule)).toHaveLength(2);
    expect((await runsOf(s.t, rule)).at(-1)).toMatchObject({ status: 'empty', window_end: T0 + 2 * WEEK });
  });

  it('a new rule sees a reported app once, as its latest listing', async () => {
    const kit4 = await s.newKit();
    const created = await s.alice.created(
      sourceRule(kit4, 'Acme Bank apps, fresh', 13, {
        query: 'Acme Bank',
        platforms: ['android'],
        official_developers: ['Acme Bank plc'],
      }),
    );
    const [match] = await matchesOf(created.id);
    const wallet = (await s.hitsOf(match!.id)).filter((hit) => hit.app_id === 'com.wallettools.acmebank');
    expect(wallet).toEqual([
      expect.objectContaining({ version: '3.1.0', installs: 50_000, discovered_at: iso(T0 - HOUR) }),
    ]);
  });

  it('an input that is not an iTunes response fails alone', async () => {
    const notItunes = path.join(s.dir, 'not-itunes.json');
    writeFileSync(notItunes, '{"kind": "storage#objects", "items": []}');
    const broken = path.join(s.dir, 'broken.json');
    writeFileSync(broken, '{"resultCount": 1, "results": [');
    const report = await findIngester('app_store')!.run(
      s.t.container.sourceContext,
      [notItunes, broken, files['play-apps.jsonl']!],
      { format: 'auto' },
    );
    expect(report.failed).toBe(true);
    expect(report.summary).toMatchObject({ inputs: 3, failed: 2, records: 6, added: 0, duplicates_skipped: 6 });
    expect(report.lines).toContainEqual(
      expect.stringMatching(
        new RegExp(`^  error: ${notItunes}: format: is in none of the formats app_store reads: itunes`),
      ),
    );
    expect(
      report.lines.some(
        (line) => line.startsWith(`  error: ${broken}: line 1, column`) && line.endsWith('malformed JSON'),
      ),
    ).toBe(true);
  });

  it("another organization's rule, match and hits are 404", async () => {
    await s.mallory.relogin();
    expectError(await s.mallory.get(rulePaths.matches(rule)), 404, 'not_found');
    expectError(await s.mallory.get(rulePaths.hits(firstMatch)), 404, 'not_found');
  });
});

describe(`sources: the app-store demo data (${testEngine})`, () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createRulesApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  // test/sources/demo-examples.test.ts checks that the catalog examples find these apps.
  it('is dated before now, and a second demo adds nothing', async () => {
    const now = t.clock.now().getTime();
    const demo = () => findSource(13)!.demo!(t.container.sourceContext, now);
    expect(await demo()).toMatch(/: 8 synthetic store listings added/);
    expect(await demo()).toMatch(/: 0 synthetic store listings added/);
    const found = await findSource(13)!.match(
      t.container.sourceContext,
      { query: 'Acme Bank', platforms: ['android'], official_developers: ['Acme Bank plc'] },
      { since: null, until: now },
      100,
    );
    expect(found.hits.map((hit) => [hit.data.name, hit.data.matched_on])).toEqual([
      ['Acme Bnak Mobile', 'name'],
      ['Wallet Pro: Cards & Rewards', 'app_id'],
      ['Budgetly', 'description'],
    ]);
    expect(found.hits.every((hit) => hit.date < now)).toBe(true);
  });
});
