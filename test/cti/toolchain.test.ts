import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuthorization, createKey } from '../api-keys/support.ts';
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
import { stixBundleProblems } from '../support/stix-schemas.ts';
import { expectTaxiiError, taxiiClient, type StixJson, type TaxiiTransport } from '../support/taxii-client.ts';
import type { TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

interface CatalogRow {
  id: number;
  name: string;
  args_schema: { params: { name: string; example?: unknown }[] };
}

/** Real HTTP on loopback, as a TAXII client outside the process reaches the server. */
const fetchTransport: TaxiiTransport = async (url, init) => {
  const response = await fetch(url, { method: init.method ?? 'GET', headers: init.headers, body: init.body });
  return { status: response.status, headers: Object.fromEntries(response.headers), body: await response.text() };
};

const basic = (key: string) => basicAuthorization('opencti', key);

/**
 * Issue 26's "done when", from outside: a machine client holding only a read-scoped API key walks
 * TAXII 2.1 over HTTP with Basic authentication (discovery → API root → collections → objects,
 * paged) through an incident of each of the 15 sources, every object it receives passes the STIX
 * 2.1 checks (OASIS schemas when present), and the organization's MISP feed lists every incident.
 */
describe(`the security team's toolchain with an API key (${testEngine})`, () => {
  let t: TestApp;
  let alice: RulesApi;
  let mallory: RulesApi;
  let key: string;
  let baseUrl: string;
  const rules = new Map<string, number>();

  beforeAll(async () => {
    t = await createRulesApp();
    alice = await rulesUser(t, 'Acme', 'alice@acme.test');
    mallory = await rulesUser(t, 'Other', 'mallory@other.test');
    await t.container.organizations.update('Acme', { alertRuleLimit: 100 });
    const kit = await createDeliveryKit(alice, { tag: 'toolchain' });
    const catalog = await alice.getJson<CatalogRow[]>(rulePaths.catalog);
    await loadEveryDemo(t);
    for (const row of catalog) {
      const body = sourceRule(kit, `example ${row.name}`, row.id, exampleArgs(row.args_schema.params));
      rules.set(row.name, (await alice.created(body)).id);
    }
    await tickAndDeliver(t);
    key = (await createKey(t, alice.token, { name: 'OpenCTI', scope: 'read' })).key;
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('walks TAXII with a read key as the Basic password: every source, every object valid STIX 2.1', async () => {
    const client = taxiiClient(fetchTransport, basic(key));
    const root = await client.discover(`${baseUrl}/taxii2/`);
    await client.apiRoot(root);
    const collections = await client.collections(root);
    expect(rules.size).toBe(15);
    for (const name of rules.keys()) {
      const collection = collections.find((c) => c.title === `Rule: example ${name}`);
      expect(collection, name).toBeDefined();
      const { objects, pages } = await client.objects(root, collection!.id, { limit: '4' });
      expect(pages, `${name} is paged`).toBeGreaterThan(1);
      const types = new Set(objects.map((object) => object.type));
      expect(types.has('note') || types.has('observed-data'), `${name}: ${[...types].join(', ')}`).toBe(true);
      // Paging may serve an SCO two hits share once per page: the bundle holds each id once.
      const unique = [...new Map(objects.map((object): [string, StixJson] => [object.id, object])).values()];
      const bundle = { type: 'bundle', id: 'bundle--6f1d9d3e-9d2a-4b7e-8f5c-1a2b3c4d5e6f', objects: unique };
      expect(stixBundleProblems(bundle), name).toEqual([]);
    }
  });

  it('refuses a wrong key (401 in the TAXII envelope) and hides another organization’s collections', async () => {
    const wrong = await fetchTransport(`${baseUrl}/taxii2/`, {
      headers: { accept: 'application/taxii+json;version=2.1', authorization: basic(`${key.slice(0, -2)}xx`) },
    });
    expectTaxiiError(wrong, 401);
    const malloryKey = (await createKey(t, mallory.token, { name: 'theirs', scope: 'read' })).key;
    const theirs = taxiiClient(fetchTransport, basic(malloryKey));
    const root = await theirs.discover(`${baseUrl}/taxii2/`);
    const mine = await taxiiClient(fetchTransport, basic(key)).collections(root);
    const visible = await theirs.collections(root);
    expect(visible.map((c) => c.id)).not.toContain(mine[1]!.id);
    const stolen = await fetchTransport(`${root}collections/${mine[1]!.id}/objects/`, {
      headers: { accept: 'application/taxii+json;version=2.1', authorization: basic(malloryKey) },
    });
    expectTaxiiError(stolen, 404);
  });

  it('serves the MISP feed to the key as a Bearer token: every incident is an event', async () => {
    const feed = async (path: string) => {
      const response = await fetch(`${baseUrl}/misp/feed${path}`, { headers: { authorization: `Bearer ${key}` } });
      expect(response.status, path).toBe(200);
      return response;
    };
    const manifest = (await (await feed('/manifest.json')).json()) as Record<string, { info: string }>;
    let incidents = 0;
    for (const ruleId of rules.values()) incidents += (await alice.matches(ruleId)).count;
    expect(incidents).toBeGreaterThanOrEqual(15);
    expect(Object.keys(manifest)).toHaveLength(incidents);
    for (const name of rules.keys())
      expect(
        Object.values(manifest).some((event) => event.info.includes(`example ${name}`)),
        name,
      ).toBe(true);
  });
});
