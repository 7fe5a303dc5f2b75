import { existsSync, writeFileSync } from 'node:fs';
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
 * The ransomware source end to end: a posts.json array (both ransomwatch shapes) and v2 API
 * records as JSON Lines ingested through the real ingester on the test app's store and manual
 * clock, rules over HTTP matching victim names as whole words and a domain in the victim,
 * website and description, hits filtered, sorted and excluded, email and signed webhook
 * delivered. Every organization here is made up.
 */

const T0 = Date.parse('2026-03-10T09:00:00Z');
const DAY = 24 * HOUR;
const RANSOMWARE = 10;

const postsJson = [
  // ransomwatch's 5-field shape
  {
    post_title: 'ACME BANK PLC',
    group_name: 'lockbit3',
    discovered: '2026-03-09 20:00:00.000000',
    published: '2026-03-09 18:30:00.123456',
    post_url: '',
  },
  {
    post_title: 'Acmeville Water District',
    group_name: 'play',
    discovered: '2026-03-09 20:05:00.000000',
    published: '2026-03-09 19:00:00.000000',
    post_url: '',
  },
  // posts.json's 7-field shape (2023 on)
  {
    post_title: 'Northwind Traders',
    group_name: 'alphv',
    discovered: '2026-03-09 21:00:00.000000',
    description: 'Wholesale distributor. Partner contracts with acme-bank.com and others, 120 GB.',
    website: 'northwind-traders.example',
    published: '2026-03-09 20:45:00.000000',
    post_url: 'http://alphvtest.onion/northwind',
  },
  {
    post_title: 'Acme Holdings',
    group_name: 'play',
    discovered: '2026-03-09 21:10:00.000000',
    description: '',
    website: 'www.acme-bank.com, acme-holdings.example',
    published: '2026-03-09 21:00:00.000000',
    post_url: 'http://playtest.onion/topic.php?id=acme',
  },
  {
    group_name: 'play',
    discovered: '2026-03-09 21:20:00.000000',
    published: '2026-03-09 21:20:00.000000',
    post_url: '',
  },
  {
    post_title: 'Initech',
    group_name: 'akira',
    discovered: '2026-03-09 21:30:00.000000',
    published: 'yesterday',
    post_url: '',
  },
  // The first post again, written differently: the same victim words, group and time.
  {
    post_title: 'Acme Bank PLC.',
    group_name: 'LockBit3',
    discovered: '2026-03-09 20:00:00.000000',
    published: '2026-03-09 18:30:00.123456',
    post_url: '',
  },
];

const v2Lines = [
  JSON.stringify({
    victim: 'acme-bank.com',
    group: 'qilin',
    attackdate: '2026-03-08T10:00:00.000000+00:00',
    discovered: '2026-03-09T22:00:00.000000+00:00',
    country: 'US',
    activity: 'Financial Services',
    description: 'Acme Bank retail banking.',
    domain: 'acme-bank.com',
    claim_url: 'http://qilintest.onion/acme',
    url: 'https://www.ransomware.live/id/test-acme-qilin',
    infostealer: { employees: 2, users: 10 },
  }),
  JSON.stringify({
    victim: 'Acme Bank Europe AG',
    group: 'alphv',
    attackdate: '2026-03-09 06:00:00',
    discovered: '2026-03-09 23:00:00',
    country: 'de',
    activity: 'Financial Services',
    description: 'Frankfurt branch.',
    domain: 'acme-bank.de',
    post_url: 'http://alphvtest.onion/acme-eu',
  }),
  '{"victim": "Broken", ',
  JSON.stringify({
    victim: 'Globex',
    group: 'akira',
    attackdate: '2026-03-09',
    country: 'GB',
    activity: 'Manufacturing',
  }),
].join('\n');

// Learned of after the first run: a post published a week earlier, and the first post again.
const lateLines = [
  JSON.stringify({
    victim: 'ACME-BANK PLC',
    group: 'akira',
    attackdate: '2026-03-03 12:00:00',
    discovered: '2026-03-10 10:00:00',
    country: 'US',
  }),
  JSON.stringify(postsJson[0]),
].join('\n');

describe(`sources: ransomware leak sites end to end (${testEngine})`, () => {
  const s = sourceSuite('ransom');
  const files: Record<string, string> = {};

  beforeAll(() => {
    for (const [name, text] of [
      ['posts.json', JSON.stringify(postsJson, null, 4)],
      ['victims-v2.jsonl', v2Lines],
      ['late.ndjson', lateLines],
    ] as const) {
      files[name] = path.join(s.dir, name);
      writeFileSync(files[name], text);
    }
  });
  const ingest = (file: string) => s.ingest('ransomware', [file]);
  const victims = (hits: HitView[]) => hits.map((hit) => hit.victim);
  const victimsOfRule = async (name: string, args: Record<string, unknown>) => {
    const rule = await s.alice.created(sourceRule(await s.newKit(), name, RANSOMWARE, args));
    return rule.total_matches_count === 0
      ? []
      : (await s.hitsOf((await s.onlyMatch(rule.id)).id)).map((hit) => [hit.victim, hit.matched_on]);
  };

  let nameRule: number;
  let nameKit: DeliveryKit;
  let nameMatch: number;

  it('ingests a posts.json array and v2 records as JSON Lines, rejecting bad records by number', async () => {
    await s.moveTo(T0 - 2 * HOUR);
    const posts = await ingest(files['posts.json']!);
    expect(posts.failed).toBe(false);
    expect(posts.summary).toMatchObject({
      inputs: 1,
      failed: 0,
      records: 5,
      added: 4,
      duplicates_skipped: 1,
      rejected: 2,
    });
    expect(posts.lines).toEqual([
      '1 inputs (0 failed): 5 posts read, 4 added, 1 duplicates skipped, 2 rejected',
      `  rejected ${files['posts.json']} record 5: post_title (or victim) is missing`,
      `  rejected ${files['posts.json']} record 6: published is not a date (YYYY-MM-DD HH:MM:SS[.ffffff], UTC unless a zone is given)`,
    ]);
    expect(posts.tally).toMatchObject({ records: 5, added: 4, duplicates: 1, rejected: 2 });

    await s.moveTo(T0 - HOUR);
    const v2 = await ingest(files['victims-v2.jsonl']!);
    expect(v2.summary).toMatchObject({ records: 3, added: 3, rejected: 1 });
    expect(v2.lines.slice(1)).toEqual([`  rejected ${files['victims-v2.jsonl']} line 3: not valid JSON`]);
  });

  it('a name rule reports the victims whose name holds its words, newest first; email and signed webhook are delivered', async () => {
    await s.moveTo(T0);
    nameKit = await s.newKit();
    const rule = await s.alice.created(
      sourceRule(nameKit, 'Acme Bank on leak sites', RANSOMWARE, { query: 'Acme Bank' }),
    );
    nameRule = rule.id;
    expect(rule).toMatchObject({
      service: RANSOMWARE,
      last_run: iso(T0),
      total_matches_count: 3,
      total_alerts_count: 1,
    });
    const match = await s.onlyMatch(rule.id);
    nameMatch = match.id;
    expect(match).toMatchObject({ total_hits: 3, stored_hits: 3, window_start: null, window_end: iso(T0) });

    const hits = await s.hitsOf(match.id);
    // Newest stored first (the v2 file, an hour later), then by publication time. "Acmeville"
    // is another word; Acme Holdings only has the domain in its website.
    expect(victims(hits)).toEqual(['Acme Bank Europe AG', 'acme-bank.com', 'ACME BANK PLC']);
    expect(hits.every((hit) => hit.matched_on === 'victim')).toBe(true);
    expect(hits[0]).toEqual({
      id: expect.any(Number),
      hit_key: expect.any(String),
      is_excluded: false,
      group: 'alphv',
      victim: 'Acme Bank Europe AG',
      website: 'acme-bank.de',
      country: 'DE',
      activity: 'Financial Services',
      description: 'Frankfurt branch.',
      post_url: 'http://alphvtest.onion/acme-eu',
      permalink: null,
      published_at: '2026-03-09T06:00:00.000Z',
      listed_at: '2026-03-09T23:00:00.000Z',
      discovered_at: iso(T0 - HOUR),
      matched_on: 'victim',
    });
    expect(hits[1]).toMatchObject({
      group: 'qilin',
      post_url: 'http://qilintest.onion/acme',
      permalink: 'https://www.ransomware.live/id/test-acme-qilin',
      published_at: '2026-03-08T10:00:00.000Z',
    });
    expect(hits[2]).toMatchObject({
      group: 'lockbit3',
      website: null,
      country: null,
      description: null,
      post_url: null,
      published_at: '2026-03-09T18:30:00.123Z',
      listed_at: '2026-03-09T20:00:00.000Z',
      discovered_at: iso(T0 - 2 * HOUR),
    });

    expect(await deliverPending(s.t)).toBe(2);
    const hooks = requestsTo(s.receiver, nameKit);
    expect(hooks).toHaveLength(1);
    expect(
      verifyAlertSystemSignature(nameKit.webhook!.secret, hooks[0]!.body, hooks[0]!.headers['x-alertsystem-signature']),
    ).toBe(true);
    expect(payloadOf(hooks[0]!)).toMatchObject({
      alert_rule_name: 'Acme Bank on leak sites',
      service: 'Ransomware leak sites',
      total_matches: 3,
      excluded_matches: 0,
    });
    const mails = s.smtp.messages.filter((m) => m.to.includes(nameKit.recipient.email));
    expect(mails).toHaveLength(1);
    expect(mails[0]!.parsed.html).toContain('Acme Bank on leak sites: 3 hits in Ransomware leak sites');
  });

  it('hits filter, sort and exclude by the declared fields', async () => {
    expect(victims(await s.hitsOf(nameMatch, { filter: 'group:ALPHV' }))).toEqual(['Acme Bank Europe AG']);
    expect(victims(await s.hitsOf(nameMatch, { filter: ['country:us', 'activity:financial services'] }))).toEqual([
      'acme-bank.com',
    ]);
    expect(await s.hitsOf(nameMatch, { filter: 'matched_on:victim' })).toHaveLength(3);
    expect(await s.hitsOf(nameMatch, { filter: 'matched_on:website' })).toHaveLength(0);

    expect(victims(await s.hitsOf(nameMatch, { sort: 'published_at' }))).toEqual([
      'acme-bank.com',
      'Acme Bank Europe AG',
      'ACME BANK PLC',
    ]);
    expect(victims(await s.hitsOf(nameMatch, { sort: '-published_at' }))).toEqual([
      'ACME BANK PLC',
      'Acme Bank Europe AG',
      'acme-bank.com',
    ]);
    expect(victims(await s.hitsOf(nameMatch, { sort: 'group' }))).toEqual([
      'Acme Bank Europe AG',
      'ACME BANK PLC',
      'acme-bank.com',
    ]);
    expect(victims(await s.hitsOf(nameMatch, { sort: 'discovered_at' }))[0]).toBe('ACME BANK PLC');

    expectError(await s.alice.get(`${rulePaths.hits(nameMatch)}?filter=description:x`), 400, 'validation_failed');
    expectError(await s.alice.get(`${rulePaths.hits(nameMatch)}?sort=country`), 400, 'validation_failed');

    const exclusion = await s.alice.createExclusion(nameRule, { field: 'victim', value: 'acme bank plc' });
    expect(exclusion.statusCode, exclusion.body).toBe(201);
    expect(victims(await s.hitsOf(nameMatch, { include_excluded: false }))).toEqual([
      'Acme Bank Europe AG',
      'acme-bank.com',
    ]);
    expect((await s.hitsOf(nameMatch)).find((hit) => hit.victim === 'ACME BANK PLC')).toMatchObject({
      is_excluded: true,
    });
    expect(await s.alice.getJson(rulePaths.match(nameMatch))).toMatchObject({ excluded_hits: 1, new_hits: 2 });
    const byGroup = await s.alice.createExclusion(nameRule, { field: 'group', value: 'qilin' });
    expect(byGroup.statusCode, byGroup.body).toBe(201);
    expect(victims(await s.hitsOf(nameMatch, { include_excluded: false }))).toEqual(['Acme Bank Europe AG']);
    for (const { id } of await s.alice.exclusions(nameRule))
      expect((await s.alice.deleteExclusion(id)).statusCode).toBe(204);
    expectError(
      await s.alice.createExclusion(nameRule, { field: 'description', value: 'x' }),
      400,
      'validation_failed',
    );
  });

  it('a domain rule also finds the domain in websites and descriptions, saying where', async () => {
    expect(await victimsOfRule('Acme domain', { query: 'acme-bank.com' })).toEqual([
      ['acme-bank.com', 'victim'],
      ['Acme Holdings', 'website'],
      ['Northwind Traders', 'description'],
    ]);
    // A URL or a subdomain names the same registrable domain.
    expect(await victimsOfRule('Acme portal', { query: 'https://portal.acme-bank.com/login' })).toHaveLength(3);
    expect(await victimsOfRule('Acme Europe domain', { query: 'www.acme-bank.de' })).toEqual([
      ['Acme Bank Europe AG', 'website'],
    ]);
  });

  it('narrows by groups and countries', async () => {
    expect(
      await victimsOfRule('Acme in Germany', { query: 'Acme Bank', groups: ['alphv', 'lockbit3'], countries: ['de'] }),
    ).toEqual([['Acme Bank Europe AG', 'victim']]);
    expect(await victimsOfRule('Acme by LockBit', { query: 'acme bank', groups: ['LockBit3'] })).toEqual([
      ['ACME BANK PLC', 'victim'],
    ]);
    expect(await victimsOfRule('Acme in France', { query: 'Acme Bank', countries: ['FR'] })).toEqual([]);
    expect(await victimsOfRule('Acme, one word', { query: 'ACME' })).toHaveLength(4);
  });

  it('args are checked: a query with a word, two-letter countries', async () => {
    const kit = await s.newKit();
    const fields = async (args: Record<string, unknown>) =>
      expectError(await s.alice.create(sourceRule(kit, 'bad args', RANSOMWARE, args)), 400, 'validation_failed').fields;
    expect(await fields({})).toEqual([{ field: 'args.query', message: 'is required (rule 2)', rule: 2 }]);
    expect(await fields({ query: '-- ** --' })).toEqual([
      { field: 'args.query', message: 'must hold a letter or a digit (rule 3)', rule: 3 },
    ]);
    expect(await fields({ query: 'Acme', countries: ['US', 'USA', 'D1'] })).toEqual([
      { field: 'args.countries[1]', message: 'must be an ISO 3166-1 alpha-2 code (two letters) (rule 3)', rule: 3 },
      { field: 'args.countries[2]', message: 'must be an ISO 3166-1 alpha-2 code (two letters) (rule 3)', rule: 3 },
    ]);
  });

  it('the next tick reports only posts stored since the last run, however old; re-ingesting adds nothing', async () => {
    await s.moveTo(T0 + 2 * HOUR);
    expect((await ingest(files['late.ndjson']!)).summary).toMatchObject({
      records: 2,
      added: 1,
      duplicates_skipped: 1,
    });

    await s.moveTo(T0 + DAY);
    await tickAndDeliver(s.t);
    const { results } = await s.alice.matches(nameRule, { page_size: 100 });
    expect(results).toHaveLength(2);
    expect(results[0]).toMatchObject({ total_hits: 1, window_start: iso(T0), window_end: iso(T0 + DAY) });
    // Published a week before, learned of now: it alerts once, now.
    expect(await s.hitsOf(results[0]!.id)).toEqual([
      expect.objectContaining({
        victim: 'ACME-BANK PLC',
        group: 'akira',
        published_at: '2026-03-03T12:00:00.000Z',
        discovered_at: iso(T0 + 2 * HOUR),
      }),
    ]);
    expect(payloadOf(requestsTo(s.receiver, nameKit)[1]!)).toMatchObject({ total_matches: 1 });

    await s.moveTo(T0 + DAY + HOUR);
    for (const name of Object.keys(files)) {
      const again = await ingest(files[name]!);
      expect(again.summary, name).toMatchObject({ added: 0, duplicates_skipped: again.summary.records });
    }
    await s.moveTo(T0 + 2 * DAY);
    await tickAndDeliver(s.t);
    expect((await s.alice.matches(nameRule)).results).toHaveLength(2);
    expect((await runsOf(s.t, nameRule)).at(-1)).toMatchObject({ status: 'empty', window_end: T0 + 2 * DAY });
  });

  it("another organization's rule, match and hits are 404", async () => {
    await s.mallory.relogin();
    expectError(await s.mallory.get(rulePaths.matches(nameRule)), 404, 'not_found');
    expectError(await s.mallory.get(rulePaths.hits(nameMatch)), 404, 'not_found');
  });
});

describe(`sources: the ransomware demo data (${testEngine})`, () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createRulesApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  // test/sources/demo-examples.test.ts checks that the catalog examples find these posts.
  it('is dated before now, and a second demo the same day adds nothing', async () => {
    const now = t.clock.now().getTime();
    const load = () => findSource(RANSOMWARE)!.demo!(t.container.sourceContext, now);
    expect(await load()).toContain(': 5 synthetic leak-site posts added');
    expect(await load()).toContain(': 0 synthetic leak-site posts added');
    const found = await findSource(RANSOMWARE)!.match(
      t.container.sourceContext,
      { query: 'acme-bank.com' },
      { since: null, until: now },
      10,
    );
    expect(found.hits.map((hit) => [hit.data.victim, hit.data.matched_on])).toEqual([
      ['Acme Bank PLC', 'website'],
      ['Northwind Traders', 'description'],
    ]);
    expect(found.hits.every((hit) => hit.date < now)).toBe(true);
  });
});

const FIXTURES = path.join(repoRoot, 'test', 'fixtures', 'ransomware');
// The real ransomware.live excerpt (../shared/fixtures/SOURCES.md), read where it is when present, never copied here.
const SHARED_EXCERPT = path.resolve(repoRoot, '..', 'shared', 'fixtures', 'ransomware_live', 'posts.excerpt.json');

describe(`sources: ransomware.live files as published (${testEngine})`, () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createRulesApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  const ingest = (file: string) =>
    findIngester('ransomware')!.run(t.container.sourceContext, [file], { format: 'posts' });
  const found = async (query: string) => {
    const { hits } = await findSource(RANSOMWARE)!.match(
      t.container.sourceContext,
      { query },
      { since: null, until: t.clock.now().getTime() },
      10,
    );
    return hits.map((hit) => hit.data);
  };

  it('posts.json (both ransomwatch shapes) is stored whole, once', async () => {
    const file = path.join(FIXTURES, 'posts.json');
    expect((await ingest(file)).summary).toMatchObject({ records: 2, added: 2, rejected: 0 });
    expect((await ingest(file)).summary).toMatchObject({ added: 0, duplicates_skipped: 2 });
    expect(await found('Harbor Point Dental')).toEqual([
      expect.objectContaining({
        website: 'www.harborpointdental.example, hpdental.example',
        published_at: '2023-07-30T11:00:00.000Z',
        listed_at: '2023-08-01T20:34:14.883Z',
      }),
    ]);
  });

  it('v2 API records keep url as the permalink; a date in the future is not stored and is counted', async () => {
    const report = await ingest(path.join(FIXTURES, 'recentvictims.v2.json'));
    expect(report.summary).toMatchObject({ records: 2, added: 2, rejected: 0 });
    expect(report.tally.warnings).toEqual([
      {
        reason: 'attackdate date in the future',
        count: 1,
        examples: [expect.stringMatching(/recentvictims\.v2\.json record 2$/)],
      },
    ]);
    expect(await found('Kessler Werkzeugbau')).toEqual([
      expect.objectContaining({
        group: 'akira',
        website: 'kessler-werkzeug.example',
        country: 'DE',
        post_url: 'http://akiraexampleonionaddressxq3l5vbwsm7p2e4t6yj2k.onion/n/1042',
        permalink: 'https://www.ransomware.live/id/S2Vzc2xlciBXZXJrwqB6ZXVnQGFraXJh',
        published_at: '2025-10-02T14:05:00.000Z',
      }),
    ]);
    // The attack date of 2099 stands aside for the date ransomware.live listed it.
    expect(await found('Millbrook Water Authority')).toEqual([
      expect.objectContaining({
        country: 'US',
        published_at: '2025-10-04T17:02:55.004Z',
        listed_at: '2025-10-04T17:02:55.004Z',
      }),
    ]);
  });

  it('an input that is no JSON is refused whole, naming the format and the tools that write it', async () => {
    const file = path.join(repoRoot, 'test', 'fixtures', 'cloud_bucket', 'aws-listobjectsv2.xml');
    const report = await ingest(file);
    expect(report.failed).toBe(true);
    expect(report.tally.errors[0]!.reason).toBe(
      `${file}: format: is in none of the formats ransomware reads: posts (ransomware.live posts.json and v2 API (api.ransomware.live/v2), ransomwatch posts.json; an array or JSON Lines)`,
    );
  });

  it("a pandas-made dump's bare NaN values are read as null", async () => {
    expect((await ingest(path.join(FIXTURES, 'victims-pandas.json'))).summary).toMatchObject({
      records: 2,
      added: 2,
      rejected: 0,
    });
    expect(await found('Orchard Lane Credit Union')).toEqual([
      expect.objectContaining({
        website: 'orchardlanecu.example',
        country: null,
        activity: null,
        post_url: null,
        description: 'Credit union, NaN values in the dump',
      }),
    ]);
    expect(await found('Tidewater Marine')).toEqual([
      expect.objectContaining({ permalink: null, website: null, published_at: '2024-11-22T09:30:00.000Z' }),
    ]);
  });

  it('the real posts.json excerpt, where present, is stored whole and found by name, website and domain', async () => {
    if (!existsSync(SHARED_EXCERPT)) return;
    expect((await ingest(SHARED_EXCERPT)).summary).toMatchObject({ records: 14, added: 14, rejected: 0 });
    const victimsOf = async (query: string) => (await found(query)).map((hit) => [hit.victim, hit.matched_on]);
    expect(await victimsOf('Tempur Sealy')).toEqual([['Tempur Sealy International', 'victim']]);
    expect(await victimsOf('tempursealy.com')).toEqual([['Tempur Sealy International', 'website']]);
    expect(await victimsOf('www.sherman.edu')).toEqual([['SHERMAN.EDU', 'victim']]);
    expect(await victimsOf('dispenser.com')).toEqual([['Garage Living, The Dispenser USA', 'website']]);
    expect(await victimsOf('jockeyclub.org')).toEqual([['jockeyclub.org....', 'victim']]);
  });
});
