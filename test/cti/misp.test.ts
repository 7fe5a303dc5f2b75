import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../support/http.ts';
import {
  createDeliveryKit,
  createRulesApp,
  rulePaths,
  rulesUser,
  sourceRule,
  tickAndDeliver,
  type RulesApi,
  exampleArgs,
  loadEveryDemo,
} from '../support/rules-api.ts';
import type { TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

interface Attribute {
  uuid: string;
  type: string;
  category: string;
  value: string;
  to_ids: boolean;
  comment: string;
  distribution: string;
  timestamp: string;
}
interface MispEvent {
  Event: {
    uuid: string;
    info: string;
    date: string;
    timestamp: string;
    analysis: string;
    threat_level_id: string;
    published: boolean;
    distribution: string;
    Orgc: { name: string; uuid: string };
    Tag: { name: string; colour: string }[];
    Attribute: Attribute[];
  };
}
type Manifest = Record<string, Omit<MispEvent['Event'], 'uuid' | 'Attribute' | 'published' | 'distribution'>>;

interface CatalogRow {
  id: number;
  name: string;
  alias: string;
  args_schema: { params: { name: string; example?: unknown }[] };
}

/**
 * The categories and the types each allows: MISP's own list where ../shared has it, otherwise the
 * rows Dragnet uses, written from MISP's documentation (misp-rfc, "Attribute / type").
 */
const SHARED_TYPES = '/work/shared/misp/category-types.json';
const categoryTypes: Record<string, string[]> = existsSync(SHARED_TYPES)
  ? (JSON.parse(readFileSync(SHARED_TYPES, 'utf8')) as { categories: Record<string, string[]> }).categories
  : {
      'Network activity': [
        'ip-dst',
        'domain',
        'email',
        'url',
        'AS',
        'stix2-pattern',
        'text',
        'x509-fingerprint-sha1',
        'x509-fingerprint-sha256',
      ],
      'External analysis': ['filename', 'filename|sha256', 'sha256', 'md5', 'text'],
      'Targeting data': ['target-user', 'target-email', 'comment'],
      Other: ['comment', 'text', 'other'],
    };

const md5 = (value: string) => createHash('md5').update(value, 'utf8').digest('hex');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const FEED = '/misp/feed';
const eventPath = (id: number) => `/service/alert_system_incident_misp_event/${id}/`;

/** A digit run that passes the Luhn check: a full card number. */
function hasFullPan(value: string): boolean {
  for (const [digits] of value.matchAll(/\d{13,19}/g)) {
    let sum = 0;
    for (let i = 0; i < digits.length; i++) {
      let d = Number(digits[digits.length - 1 - i]);
      if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
      sum += d;
    }
    if (sum % 10 === 0) return true;
  }
  return false;
}

describe(`MISP event export and feed (${testEngine})`, () => {
  let t: TestApp;
  let alice: RulesApi;
  let mallory: RulesApi;
  /** Each source's rule and the incident its first run recorded. */
  const incidents: { source: CatalogRow; ruleName: string; incidentId: number }[] = [];

  const feedGet = (path: string, token = alice.token) => t.request({ method: 'GET', url: `${FEED}${path}`, token });

  beforeAll(async () => {
    t = await createRulesApp();
    alice = await rulesUser(t, 'Acme', 'alice@acme.test');
    mallory = await rulesUser(t, 'Other', 'mallory@other.test');
    const kit = await createDeliveryKit(alice, { tag: 'misp' });
    const catalog = await alice.getJson<CatalogRow[]>(rulePaths.catalog);
    await loadEveryDemo(t);
    for (const row of catalog) {
      const ruleName = `misp ${row.name}`;
      // One rule marked red, to see the marking's tag; the others keep the default (amber).
      const marking = row.name === 'phishing' ? { tlp: 'red' } : {};
      const rule = await alice.created(sourceRule(kit, ruleName, row.id, exampleArgs(row.args_schema.params), marking));
      await tickAndDeliver(t);
      const [match] = (await alice.matches(rule.id)).results;
      expect(match, row.name).toBeDefined();
      incidents.push({ source: row, ruleName, incidentId: match!.id });
    }
  }, 180_000);
  afterAll(async () => {
    await t?.close();
  });

  /** Card sources: no attribute carries a full card number (Discord's snowflake ids may pass Luhn). */
  const CARD_SOURCES = ['credit_card', 'bin_cvv'];
  const checkAttributes = (event: MispEvent, source: string) => {
    for (const attribute of event.Event.Attribute) {
      expect(attribute.uuid).toMatch(UUID);
      expect(categoryTypes[attribute.category], `category ${attribute.category}`).toBeDefined();
      expect(categoryTypes[attribute.category], `${attribute.category} / ${attribute.type}`).toContain(attribute.type);
      expect(attribute.value.length).toBeGreaterThan(0);
      if (CARD_SOURCES.includes(source)) expect(hasFullPan(attribute.value), attribute.value).toBe(false);
    }
    const pairs = event.Event.Attribute.map((a) => `${a.type}|${a.value}`);
    expect(new Set(pairs).size, 'one attribute per type and value').toBe(pairs.length);
  };

  it("exports an incident as a MISP event: stable uuid, info, TLP and source tags, the hits' attributes", async () => {
    for (const { source, ruleName, incidentId } of incidents) {
      const response = await alice.get(eventPath(incidentId));
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers['content-disposition']).toMatch(
        /^attachment; filename="misp-event-[0-9a-f-]{36}\.json"$/,
      );
      const event = response.json<MispEvent>();
      expect(event.Event).toMatchObject({
        uuid: expect.stringMatching(UUID),
        info: `${ruleName} (${source.alias})`,
        date: t.clock.now().toISOString().slice(0, 10),
        timestamp: expect.stringMatching(/^\d+$/),
        analysis: '0',
        threat_level_id: expect.stringMatching(/^[1-4]$/),
        published: true,
        distribution: '0',
        Orgc: { name: 'Acme', uuid: expect.stringMatching(UUID) },
      });
      const tlp = source.name === 'phishing' ? 'tlp:red' : 'tlp:amber';
      expect(event.Event.Tag.map((tag) => tag.name)).toEqual([tlp, `dragnet:source="${source.name}"`]);
      expect(event.Event.Attribute.length, source.name).toBeGreaterThan(0);
      checkAttributes(event, source.name);
      // Exported again, every uuid is the same: MISP updates the event instead of adding one.
      expect((await alice.getJson<MispEvent>(eventPath(incidentId))).Event).toEqual(event.Event);
    }
  });

  it('to_ids is set only on what an indicator names', async () => {
    for (const { incidentId } of incidents) {
      const event = await alice.getJson<MispEvent>(eventPath(incidentId));
      for (const attribute of event.Event.Attribute.filter((a) => a.to_ids))
        expect(['domain', 'url', 'ip-dst', 'email', 'stix2-pattern', 'sha256', 'md5', 'filename|sha256']).toContain(
          attribute.type,
        );
      for (const attribute of event.Event.Attribute.filter((a) => a.type === 'text'))
        expect(attribute.to_ids).toBe(false);
    }
  });

  it('lists every incident of the demo data in the feed: manifest, one event file each, hashes.csv', async () => {
    const manifestResponse = await feedGet('/manifest.json');
    expect(manifestResponse.statusCode, manifestResponse.body).toBe(200);
    expect(manifestResponse.headers['content-type']).toMatch(/^application\/json/);
    expect(manifestResponse.headers['cache-control']).toBe('private, no-cache');
    const manifest = manifestResponse.json<Manifest>();
    expect(Object.keys(manifest)).toHaveLength(incidents.length);

    const expectedHashes = new Set<string>();
    for (const { source, incidentId } of incidents) {
      const exported = await alice.getJson<MispEvent>(eventPath(incidentId));
      const {
        uuid,
        Attribute: attributes,
        published: _p,
        publish_timestamp: _pt,
        distribution: _d,
        ...head
      } = exported.Event as MispEvent['Event'] & { publish_timestamp: string };
      expect(manifest[uuid], `manifest lists ${uuid}`).toEqual(head);

      const file = await feedGet(`/${uuid}.json`);
      expect(file.statusCode, file.body).toBe(200);
      const event = file.json<MispEvent>();
      expect(event.Event).toEqual(exported.Event);
      checkAttributes(event, source.name);
      for (const attribute of attributes)
        for (const part of attribute.type.includes('|') ? attribute.value.split('|') : [attribute.value])
          expectedHashes.add(`${md5(part)},${uuid}`);
    }

    const hashes = await feedGet('/hashes.csv');
    expect(hashes.statusCode).toBe(200);
    expect(hashes.headers['content-type']).toMatch(/^text\/csv/);
    const lines = hashes.body.trimEnd().split('\n');
    expect(new Set(lines)).toEqual(expectedHashes);
    expect(lines).toHaveLength(expectedHashes.size);
  });

  it("another organization's incident, event and feed: 404 and an empty feed", async () => {
    const { incidentId } = incidents[0]!;
    expectError(await mallory.get(eventPath(incidentId)), 404, 'not_found');
    expectError(await mallory.get(eventPath(999_999)), 404, 'not_found');
    const uuid = (await alice.getJson<MispEvent>(eventPath(incidentId))).Event.uuid;
    expectError(await feedGet(`/${uuid}.json`, mallory.token), 404, 'not_found');
    expect((await feedGet('/manifest.json', mallory.token)).json()).toEqual({});
    expect((await feedGet('/hashes.csv', mallory.token)).body).toBe('');
  });

  it('an event file name that is not <uuid>.json is a 400 naming it; an unknown uuid a 404', async () => {
    const error = expectError(await feedGet('/not-an-event.json'), 400, 'validation_failed');
    expect(error.fields?.map((f) => f.field)).toEqual(['file']);
    expectError(await feedGet(`/${'0'.repeat(8)}-0000-0000-0000-${'0'.repeat(12)}.json`), 404, 'not_found');
    expectError(await alice.get('/service/alert_system_incident_misp_event/abc/'), 400, 'validation_failed');
  });

  it('needs a token: 401 without one, on the export and on every feed file', async () => {
    const uuid = (await alice.getJson<MispEvent>(eventPath(incidents[0]!.incidentId))).Event.uuid;
    for (const url of [
      eventPath(incidents[0]!.incidentId),
      `${FEED}/manifest.json`,
      `${FEED}/hashes.csv`,
      `${FEED}/${uuid}.json`,
    ]) {
      expectError(await t.request({ method: 'GET', url }), 401, 'unauthorized');
      expectError(await t.request({ method: 'GET', url, token: 'not-a-token' }), 401, 'unauthorized');
    }
  });

  it('an incident whose hits are all excluded (false positives) leaves the feed; its event export has no attributes', async () => {
    const { incidentId } = incidents.find((i) => i.source.name === 'messenger')!;
    const { rule_id: ruleId } = await alice.getJson<{ rule_id: number }>(rulePaths.match(incidentId));
    const uuid = (await alice.getJson<MispEvent>(eventPath(incidentId))).Event.uuid;
    const { results: hits } = await alice.hits(incidentId, { page_size: 100 });
    const exclusions: number[] = [];
    for (const hit of hits) {
      const response = await alice.createExclusion(ruleId, { field: 'hit_key', value: hit.hit_key });
      expect(response.statusCode, response.body).toBe(201);
      exclusions.push(response.json<{ id: number }>().id);
    }
    try {
      const manifest = (await feedGet('/manifest.json')).json<Manifest>();
      expect(Object.keys(manifest)).toHaveLength(incidents.length - 1);
      expect(manifest[uuid]).toBeUndefined();
      expect((await feedGet('/hashes.csv')).body).not.toContain(uuid);
      expectError(await feedGet(`/${uuid}.json`), 404, 'not_found');
      expect((await alice.getJson<MispEvent>(eventPath(incidentId))).Event.Attribute).toEqual([]);
    } finally {
      for (const id of exclusions) expect((await alice.deleteExclusion(id)).statusCode).toBeLessThan(300);
    }
    expect(Object.keys((await feedGet('/manifest.json')).json<Manifest>())).toContain(uuid);
  });

  it("a big organization's feed is read a page at a time: every incident and every hit, across page boundaries", async () => {
    const big = await rulesUser(t, 'Big', 'bob@big.test');
    const kit = await createDeliveryKit(big, { tag: 'big' });
    const phishing = incidents.find((i) => i.source.name === 'phishing')!;
    const rule = await big.created(sourceRule(kit, 'big phishing', 8, exampleArgs(phishing.source.args_schema.params)));
    const [match] = (await big.matches(rule.id)).results;
    const db = t.container.store.db;
    const template = await db.selectFrom('matches').selectAll().where('id', '=', match!.id).executeTakeFirstOrThrow();
    const hitTemplate = await db
      .selectFrom('match_hits')
      .selectAll()
      .where('match_id', '=', match!.id)
      .orderBy('id')
      .executeTakeFirstOrThrow();
    const data = JSON.parse(hitTemplate.data) as Record<string, unknown>;
    // More incidents than a page of incidents (500), and one incident with more hits than a page of hits (2000).
    const { id: _id, ...matchValues } = template;
    const ids: number[] = [];
    const { id: _runId, ...runValues } = await db
      .selectFrom('rule_runs')
      .selectAll()
      .where('id', '=', template.run_id)
      .executeTakeFirstOrThrow();
    for (let i = 0; i < 1_100; i++) {
      const run = await db
        .insertInto('rule_runs')
        .values({ ...runValues, run_key: `${runValues.run_key}:misp-${i}` })
        .returning('id')
        .executeTakeFirstOrThrow();
      const row = await db
        .insertInto('matches')
        .values({ ...matchValues, run_id: Number(run.id) })
        .returning('id')
        .executeTakeFirstOrThrow();
      ids.push(Number(row.id));
    }
    const hitRows = (matchId: number, n: number, tag: string) =>
      Array.from({ length: n }, (_, i) => ({
        match_id: matchId,
        rule_id: rule.id,
        hit_key: `${tag}-${i}`,
        hit_date: hitTemplate.hit_date,
        data: JSON.stringify({ ...data, domain: `${tag}-${i}.big.test` }),
        is_excluded: 0,
      }));
    for (let i = 0; i < ids.length; i += 100)
      await db
        .insertInto('match_hits')
        .values(ids.slice(i, i + 100).flatMap((id) => hitRows(id, 2, `i${id}`)))
        .execute();
    const crowded = ids[ids.length - 1]!;
    for (let i = 0; i < 4_500; i += 500)
      await db
        .insertInto('match_hits')
        .values(hitRows(crowded, 4_500, 'crowd').slice(i, i + 500))
        .execute();

    const manifest = (await feedGet('/manifest.json', big.token)).json<Manifest>();
    expect(Object.keys(manifest)).toHaveLength(ids.length + 1);
    const lines = (await feedGet('/hashes.csv', big.token)).body.trimEnd().split('\n');
    const perEvent = new Map<string, number>();
    for (const line of lines) {
      const [hash, uuid] = line.split(',');
      expect(hash).toMatch(/^[0-9a-f]{32}$/);
      perEvent.set(uuid!, (perEvent.get(uuid!) ?? 0) + 1);
    }
    expect(new Set(perEvent.keys())).toEqual(new Set(Object.keys(manifest)));
    const crowdedEvent = await big.getJson<MispEvent>(eventPath(crowded));
    const crowdedLines = crowdedEvent.Event.Attribute.flatMap((a) =>
      a.type.includes('|') ? a.value.split('|') : [a.value],
    );
    expect(crowdedLines.length).toBeGreaterThan(2_000);
    expect(perEvent.get(crowdedEvent.Event.uuid)).toBe(crowdedLines.length);
    const file = await feedGet(`/${crowdedEvent.Event.uuid}.json`, big.token);
    expect(file.json<MispEvent>().Event).toEqual(crowdedEvent.Event);
  }, 120_000);
});
