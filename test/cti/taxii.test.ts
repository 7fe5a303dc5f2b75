import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExportedHitReader, type ExportedHit } from '../../src/modules/cti/exported-hits.ts';
import { createStixMapper, stixId, type StixObject } from '../../src/modules/cti/stix/stix-mapper.ts';
import { createTaxiiCollections } from '../../src/modules/cti/taxii/taxii-collections.ts';
import { createObjectPager, type ObjectPosition } from '../../src/modules/cti/taxii/taxii-objects.ts';
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
import {
  expectTaxiiError,
  taxiiClient,
  TAXII_21,
  type StixJson,
  type TaxiiClient,
  type TaxiiTransport,
} from '../support/taxii-client.ts';
import type { TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

const DISCOVERY = 'http://dragnet.test/taxii2/';

interface CatalogRow {
  id: number;
  name: string;
  args_schema: { params: { name: string; example?: unknown }[] };
}

/** app.inject behind the client: it sends the path and query of the absolute URLs it follows. */
const injectTransport =
  (t: TestApp): TaxiiTransport =>
  async (url, init) => {
    const target = new URL(url, DISCOVERY);
    const response = await t.app.inject({
      method: (init.method ?? 'GET') as 'GET',
      url: target.pathname + target.search,
      headers: { host: target.host, ...init.headers },
      ...(init.body === undefined ? {} : { payload: init.body }),
    });
    return { status: response.statusCode, headers: response.headers as Record<string, string>, body: response.body };
  };

const ids = (objects: StixJson[]) => objects.map((object) => object.id);

/** What the server should serve: the STIX mapper's objects of the stored hits, read beside it. */
const stix = createStixMapper({ instanceName: 'Dragnet' });

describe(`the TAXII 2.1 server (${testEngine})`, () => {
  let t: TestApp;
  let alice: RulesApi;
  let client: TaxiiClient;
  let root: string;
  /** Each source's rule, by source name. */
  const rules = new Map<string, number>();

  beforeAll(async () => {
    t = await createRulesApp();
    alice = await rulesUser(t, 'Acme', 'alice@acme.test');
    await t.container.organizations.update('Acme', { alertRuleLimit: 100 });
    const kit = await createDeliveryKit(alice, { tag: 'taxii' });
    const catalog = await alice.getJson<CatalogRow[]>(rulePaths.catalog);
    await loadEveryDemo(t);
    for (const row of catalog) {
      const rule = await alice.created(
        sourceRule(kit, `example ${row.name}`, row.id, exampleArgs(row.args_schema.params)),
      );
      rules.set(row.name, rule.id);
    }
    await tickAndDeliver(t);
    client = taxiiClient(injectTransport(t), `Bearer ${alice.token}`);
    root = await client.discover(DISCOVERY);
  });
  afterAll(async () => {
    await t?.close();
  });

  /** The id of the collection titled so ("All incidents", or "Rule: example <source>"). */
  const collectionOf = async (source: string | null) => {
    const title = source === null ? 'All incidents' : `Rule: example ${source}`;
    const found = (await client.collections(root)).find((collection) => collection.title === title);
    expect(found, title).toBeDefined();
    return found!.id;
  };

  it('discovery names one API root that speaks TAXII 2.1; collections are read-only, one per rule and "All incidents"', async () => {
    expect(root).toBe('http://dragnet.test/taxii2/dragnet/');
    const apiRoot = await client.apiRoot(root);
    expect(apiRoot.versions).toEqual([TAXII_21]);
    const collections = await client.collections(root);
    expect(collections.map((c) => c.title)).toEqual([
      'All incidents',
      ...[...rules.keys()].map((name) => `Rule: example ${name}`),
    ]);
    for (const collection of collections) expect(collection).toMatchObject({ can_read: true, can_write: false });
    // Stable across calls (UUIDv5 of organization and rule).
    expect((await client.collections(root)).map((c) => c.id)).toEqual(collections.map((c) => c.id));
  });

  it("walks an incident of each of the 15 sources: every hit's objects, paged, each object once", async () => {
    expect(rules.size).toBe(15);
    for (const [name, ruleId] of rules) {
      const [match] = (await alice.matches(ruleId)).results;
      expect(match, `${name} has an incident`).toBeDefined();
      const hits = await createExportedHitReader(t.container.store.db).ofIncident(alice.orgId, match!.id);
      expect(hits.length, `${name} has hits`).toBeGreaterThan(0);
      const expected = new Set(hits.flatMap((hit) => stix.objectsOfHit(hit).map((o) => o.id)));
      const collection = await collectionOf(name);
      const { objects } = await client.objects(root, collection, { limit: '3' });
      const got = new Set(ids(objects));
      for (const id of expected) expect(got.has(id), `${name}: ${id}`).toBe(true);
      for (const shared of stix.sharedObjects()) expect(got.has(shared.id)).toBe(true);
      for (const object of objects) expect(object.spec_version ?? '2.1').toBe('2.1');
    }
  });

  it('small pages give every object of the collection exactly once, in the order one big page has them', async () => {
    const all = await collectionOf(null);
    const whole = await client.objects(root, all, { limit: '10000' });
    expect(whole.pages).toBe(1);
    expect(new Set(ids(whole.objects)).size).toBe(whole.objects.length);
    for (const limit of ['1', '7']) {
      const paged = await client.objects(root, all, { limit });
      expect(paged.pages).toBeGreaterThanOrEqual(Math.ceil(whole.objects.length / Number(limit)));
      // Within a page an object repeats never; across pages only an object several hits share.
      expect([...new Set(ids(paged.objects))]).toEqual(ids(whole.objects));
    }
    // The default page holds them all here; the envelope of the last page says more: false.
    const first = await client.raw(`${root}collections/${all}/objects/`);
    expect(JSON.parse(first.body)).toMatchObject({ more: false });
  });

  it('added_after keeps objects added strictly after it; the date headers name the page', async () => {
    const all = await collectionOf(null);
    const response = await client.raw(`${root}collections/${all}/objects/?limit=5`);
    const firstAdded = String(response.headers['x-taxii-date-added-first']);
    const lastAdded = String(response.headers['x-taxii-date-added-last']);
    expect(Date.parse(lastAdded)).toBeGreaterThanOrEqual(Date.parse(firstAdded));
    const after = await client.objects(root, all, { added_after: lastAdded });
    const manifest = await client.manifest(root, all);
    const later = manifest.filter((record) => Date.parse(record.date_added) > Date.parse(lastAdded));
    expect(new Set(ids(after.objects))).toEqual(new Set(later.map((record) => record.id)));
    const bad = await client.raw(`${root}collections/${all}/objects/?added_after=yesterday`);
    expect(expectTaxiiError(bad, 400).description).toMatch(/added_after/);
  });

  it('match[type] and match[id] filter; the manifest and versions agree with the objects; one object by id', async () => {
    const all = await collectionOf(null);
    const { objects } = await client.objects(root, all);
    const types = [...new Set(objects.map((object) => object.type))];
    const [type] = types;
    const onlyType = await client.objects(root, all, { 'match[type]': `${type},x-none` });
    expect(ids(onlyType.objects)).toEqual(ids(objects.filter((object) => object.type === type)));

    const manifest = await client.manifest(root, all);
    expect(manifest.map((record) => record.id)).toEqual(ids(objects));
    const sample = objects[objects.length - 1]!;
    const record = manifest.find((entry) => entry.id === sample.id)!;
    expect(record.version).toBe(sample.modified ?? sample.created ?? record.date_added);

    expect(await client.object(root, all, sample.id)).toEqual([sample]);
    expect(await client.versions(root, all, sample.id)).toEqual([record.version]);
    const byIds = await client.objects(root, all, { 'match[id]': `${sample.id},${objects[0]!.id}` });
    expect(new Set(ids(byIds.objects))).toEqual(new Set([sample.id, objects[0]!.id]));
    const version = await client.objects(root, all, { 'match[id]': sample.id, 'match[version]': record.version });
    expect(ids(version.objects)).toEqual([sample.id]);
    const spec = await client.objects(root, all, { 'match[spec_version]': '2.0' });
    expect(spec.objects).toEqual([]);

    const missing = await client.raw(`${root}collections/${all}/objects/note--00000000-0000-5000-8000-000000000000/`);
    expectTaxiiError(missing, 404);
  });

  it('a page goes gzip or brotli to a client that takes it, still under the TAXII media type', async () => {
    const url = `/taxii2/dragnet/collections/${await collectionOf(null)}/objects/?limit=10000`;
    const get = (acceptEncoding: string) =>
      t.app.inject({
        url,
        headers: { accept: TAXII_21, authorization: `Bearer ${alice.token}`, 'accept-encoding': acceptEncoding },
      });
    const plain = await get('identity');
    expect(plain.headers['content-encoding']).toBeUndefined();
    for (const [accept, encoding, decode] of [
      ['gzip, deflate', 'gzip', gunzipSync],
      ['gzip, deflate, br', 'br', brotliDecompressSync],
    ] as const) {
      const compressed = await get(accept);
      expect(compressed.headers['content-encoding']).toBe(encoding);
      expect(compressed.headers['content-type']).toBe(TAXII_21);
      expect(compressed.headers.vary).toBe('Accept-Encoding');
      expect(compressed.rawPayload.length).toBeLessThan(plain.rawPayload.length / 4);
      expect(decode(compressed.rawPayload).toString()).toBe(plain.body);
    }
  });

  it('answers 406 to an Accept it cannot serve, and takes */* and application/taxii+json without a version', async () => {
    for (const accept of ['application/json', 'application/taxii+json;version=2.0', 'text/html']) {
      expectTaxiiError(await client.raw(root, { headers: { accept } }), 406);
    }
    for (const accept of [
      '*/*',
      'application/taxii+json',
      'application/taxii+json; version=2.1',
      'text/html, */*;q=0.1',
    ]) {
      expect((await client.raw(root, { headers: { accept } })).status).toBe(200);
    }
  });

  it('every endpoint needs authentication: 401 with the error envelope', async () => {
    const all = await collectionOf(null);
    for (const url of [DISCOVERY, root, `${root}collections/`, `${root}collections/${all}/objects/`]) {
      const response = await client.raw(url, { headers: { authorization: '' } });
      const error = expectTaxiiError(response, 401);
      expect(error.error_code).toBe('unauthorized');
      expect(String(response.headers['www-authenticate'])).toMatch(/Bearer/);
    }
    expectTaxiiError(await client.raw(root, { headers: { authorization: 'Bearer nope' } }), 401);
  });

  it("another organization's collection is a 404 with the envelope, and its list has none of ours", async () => {
    const all = await collectionOf(null);
    const ruleCollection = await collectionOf('phishing');
    const bob = await rulesUser(t, 'Globex', 'bob@globex.test');
    const other = taxiiClient(injectTransport(t), `Bearer ${bob.token}`);
    const theirs = await other.collections(root);
    expect(theirs.map((c) => c.title)).toEqual(['All incidents']);
    expect(theirs[0]!.id).not.toBe(all);
    expect((await other.objects(root, theirs[0]!.id)).objects).toEqual([]);
    for (const id of [all, ruleCollection]) {
      expectTaxiiError(await other.raw(`${root}collections/${id}/objects/`), 404);
      expectTaxiiError(await other.raw(`${root}collections/${id}/`), 404);
    }
    expectTaxiiError(await client.raw(`${root}collections/not-a-collection/`), 404);
    expectTaxiiError(await client.raw(`${root}nothing-here/`), 404);
  });

  it('refuses writes: POST objects and DELETE an object are 403, other methods 405, all with the envelope', async () => {
    const all = await collectionOf(null);
    const envelope = JSON.stringify({ objects: [] });
    const post = await client.raw(`${root}collections/${all}/objects/`, {
      method: 'POST',
      headers: { 'content-type': TAXII_21 },
      body: envelope,
    });
    expect(expectTaxiiError(post, 403).description).toMatch(/read-only/);
    const { objects } = await client.objects(root, all, { limit: '1' });
    const remove = await client.raw(`${root}collections/${all}/objects/${objects[0]!.id}/`, { method: 'DELETE' });
    expectTaxiiError(remove, 403);
    const put = await client.raw(`${root}collections/`, {
      method: 'PUT',
      headers: { 'content-type': TAXII_21 },
      body: '{}',
    });
    expectTaxiiError(put, 405);
    // Another organization's collection: 404 before the refusal.
    const bob = await t.login('bob@globex.test').catch(() => null);
    if (bob) {
      const other = taxiiClient(injectTransport(t), `Bearer ${bob.access}`);
      expectTaxiiError(await other.raw(`${root}collections/${all}/objects/`, { method: 'POST', body: envelope }), 404);
    }
    expectTaxiiError(await client.raw(`${root}status/1234/`), 404);
  });

  it('paused rules keep their collection, a deleted rule loses it (404); excluded hits are in no collection', async () => {
    const certificates = rules.get('certificate')!;
    const certificateCollection = await collectionOf('certificate');
    const pause = await t.request({
      method: 'POST',
      url: `/service/alert_system_rule_pause/${certificates}/`,
      token: alice.token,
    });
    expect(pause.statusCode, pause.body).toBe(200);
    expect(await collectionOf('certificate')).toBe(certificateCollection);

    const phishing = await collectionOf('phishing');
    const before = await client.objects(root, phishing);
    const [match] = (await alice.matches(rules.get('phishing')!)).results;
    const excluded = await t.request({
      method: 'POST',
      url: `/service/alert_system_incident_update/${match!.id}/`,
      token: alice.token,
      body: { status: 'false_positive', exclude_hits: true },
    });
    expect(excluded.statusCode, excluded.body).toBe(200);
    const after = await client.objects(root, phishing);
    expect(after.objects).toEqual([]);
    expect(before.objects.length).toBeGreaterThan(0);
    const all = await client.objects(root, await collectionOf(null));
    const allIds = new Set(ids(all.objects));
    // An observable may be another hit's too (docs/stix.md): the objects of the hit itself go.
    const hitObjects = before.objects.filter((o) =>
      ['note', 'observed-data', 'indicator', 'sighting'].includes(o.type),
    );
    expect(hitObjects.length).toBeGreaterThan(0);
    for (const object of hitObjects) expect(allIds.has(object.id)).toBe(false);

    const pasteCollection = await collectionOf('paste_site');
    expect((await alice.remove(rules.get('paste_site')!)).statusCode).toBeLessThan(300);
    expectTaxiiError(await client.raw(`${root}collections/${pasteCollection}/objects/`), 404);
    const titles = (await client.collections(root)).map((collection) => collection.title);
    expect(titles).not.toContain('Rule: example paste_site');
  });

  it('pages exactly when hits have several objects and share SCOs (the pager under a richer mapping)', async () => {
    // Three objects a hit, the last one an SCO every hit of a rule shares: the shape the full
    // STIX mapping has (docs/stix.md), whatever the mapper of this branch makes.
    const shared = (ruleId: number): StixObject => ({
      type: 'domain-name',
      spec_version: '2.1',
      id: stixId('domain-name', `rule-${ruleId}.test`),
      value: `rule-${ruleId}.test`,
    });
    const objectsOfHit = (hit: ExportedHit): StixObject[] => [
      ...stix.objectsOfHit(hit),
      { type: 'url', spec_version: '2.1', id: stixId('url', `hit:${hit.id}`), value: `https://h${hit.id}.test/` },
      shared(hit.ruleId),
    ];
    const collections = createTaxiiCollections(t.container.store.db);
    const pager = createObjectPager({ collections, objectsOfHit, sharedObjects: () => stix.sharedObjects() });
    const [all] = await collections.list(alice.orgId);
    const none = { ids: null, types: null, versions: null, specVersions: null };
    const observables = new Set<string>();
    const walk = async (limit: number) => {
      const pages: string[][] = [];
      let after: ObjectPosition | null = null;
      do {
        const page = await pager({
          orgId: alice.orgId,
          collection: all!,
          after,
          addedAfter: null,
          limit,
          filters: none,
        });
        expect(page.items.length).toBeLessThanOrEqual(limit);
        expect(page.items.length > 0 || !page.next).toBe(true);
        pages.push(page.items.map((item) => item.object.id));
        // SCOs have no `created`: the ones several hits share may repeat across pages.
        for (const item of page.items) if (!('created' in item.object)) observables.add(item.object.id);
        after = page.next;
      } while (after);
      return pages;
    };
    const [whole] = await walk(10_000);
    const unique = new Set(whole);
    expect(unique.size).toBe(whole!.length);
    for (const limit of [1, 2, 5]) {
      const pages = await walk(limit);
      const flat = pages.flat();
      expect(new Set(flat)).toEqual(unique);
      // Each object of one hit exactly once; a shared SCO once per page at most.
      const counts = new Map<string, number>();
      for (const id of flat) counts.set(id, (counts.get(id) ?? 0) + 1);
      for (const [id, count] of counts) if (!observables.has(id)) expect(count, id).toBe(1);
      for (const page of pages) expect(new Set(page).size).toBe(page.length);
    }
  });

  it('a bad next or limit is a 400 naming it', async () => {
    const all = await collectionOf(null);
    expect(expectTaxiiError(await client.raw(`${root}collections/${all}/objects/?next=zzz`), 400).description).toMatch(
      /next/,
    );
    expect(expectTaxiiError(await client.raw(`${root}collections/${all}/objects/?limit=0`), 400).description).toMatch(
      /limit/,
    );
  });
});
