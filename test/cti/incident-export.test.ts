import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExportedHitReader } from '../../src/modules/cti/exported-hits.ts';
import { createStixMapper } from '../../src/modules/cti/stix/stix-mapper.ts';
import { findSource } from '../../src/modules/sources/index.ts';
import { channel, message } from '../support/corpus.ts';
import { expectError } from '../support/http.ts';
import {
  createDeliveryKit,
  createRulesApp,
  rulePaths,
  rulesUser,
  writeCorpus,
  type DeliveryKit,
  type HitView,
  type RulesApi,
  exampleArgs,
  loadEveryDemo,
} from '../support/rules-api.ts';
import { stixBundleProblems, stixSchemasPresent } from '../support/stix-schemas.ts';
import type { TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

type StixObject = { type: string; id: string; [property: string]: unknown };
type Bundle = { type: string; id: string; objects: StixObject[] };

const exportPath = (incidentId: number, format: string) =>
  `/service/alert_system_incident_export/${incidentId}/?format=${format}`;

const TLP_AMBER = 'marking-definition--55d920b0-5e8b-4f79-9ee9-91f868d9b421';
const TLP_RED = 'marking-definition--e828b379-4e03-4974-9ac4-e53a884c97c1';

/** Sources whose demo hit is an indicator (docs/stix.md). */
const INDICATOR_SOURCES = new Set([8, 9, 13]);

describe(`cti: incident exports as CSV, JSON and STIX 2.1 (${testEngine}; OASIS schemas ${stixSchemasPresent ? 'present' : 'absent'})`, () => {
  let t: TestApp;
  let alice: RulesApi;
  let bob: RulesApi;
  let kit: DeliveryKit;
  /** service id -> the incident (match) of a rule made with the catalog's example args. */
  const incidents = new Map<number, { ruleId: number; matchId: number }>();

  const exported = async (api: RulesApi, incidentId: number, format: string) => {
    const response = await api.get(exportPath(incidentId, format));
    expect(response.statusCode, response.body).toBe(200);
    return response;
  };
  const bundleOf = async (incidentId: number) => JSON.parse((await exported(alice, incidentId, 'stix')).body) as Bundle;

  const ruleBody = (service: number, args: Record<string, unknown>, name: string, extra = {}) => ({
    name,
    service,
    args,
    email_template: kit.template.id,
    recipients: [kit.recipient.id],
    ...extra,
  });

  const firstMatch = async (ruleId: number) => {
    // An async source (raw leak extended) fills its match in a background job.
    while ((await t.container.jobs.runDue()) > 0);
    const [match] = (await alice.matches(ruleId)).results;
    expect(match?.status).toBe('complete');
    return match!.id;
  };

  beforeAll(async () => {
    t = await createRulesApp();
    alice = await rulesUser(t, 'Acme', 'alice@acme.test');
    bob = await rulesUser(t, 'Other', 'bob@other.test');
    await t.container.organizations.update('Acme', { alertRuleLimit: 100 });
    kit = await createDeliveryKit(alice, { tag: 'stix' });
    await loadEveryDemo(t);
    for (let id = 1; id <= 15; id++) {
      const source = findSource(id)!;
      const rule = await alice.created(ruleBody(id, exampleArgs(source.params), `stix ${source.name}`));
      expect(rule.tlp).toBe('amber');
      incidents.set(id, { ruleId: rule.id, matchId: await firstMatch(rule.id) });
    }
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  it('an incident of each of the 15 sources exports as a STIX 2.1 bundle whose every object validates', async () => {
    for (const [service, { matchId }] of incidents) {
      const response = await exported(alice, matchId, 'stix');
      expect(response.headers['content-type']).toBe('application/stix+json;version=2.1');
      expect(response.headers['content-disposition']).toBe(
        `attachment; filename="dragnet-incident-${matchId}.stix.json"`,
      );
      const bundle = JSON.parse(response.body) as Bundle;
      expect(stixBundleProblems(bundle), `service ${service}`).toEqual([]);
      const types = new Set(bundle.objects.map((object) => object.type));
      expect(types.has('identity') && types.has('marking-definition') && types.has('note'), `service ${service}`).toBe(
        true,
      );
      expect(types.has('indicator'), `service ${service} indicator`).toBe(INDICATOR_SOURCES.has(service));
      expect(types.has('sighting')).toBe(types.has('indicator'));
      // Cards have no observable; every other source names at least one.
      expect(types.has('observed-data'), `service ${service}`).toBe(service !== 6 && service !== 7);
      const hits = (await alice.hits(matchId, { page_size: 100 })).results;
      expect(bundle.objects.filter((object) => object.type === 'note')).toHaveLength(hits.length);
      for (const object of bundle.objects.filter((o) => o.type !== 'marking-definition' && o.type !== 'identity'))
        expect(object.object_marking_refs, object.id).toEqual([TLP_AMBER]);
    }
  });

  it('the STIX checks catch a broken object (a missing pattern, a dangling reference, a bad id)', async () => {
    const bundle = await bundleOf(incidents.get(8)!.matchId);
    const indicator = bundle.objects.find((object) => object.type === 'indicator')!;
    const broken = {
      ...bundle,
      objects: bundle.objects.map((object) =>
        object === indicator ? { ...object, pattern: undefined, created_by_ref: 'identity--not-a-uuid' } : object,
      ),
    };
    const problems = stixBundleProblems(broken as Bundle);
    expect(problems.some((problem) => problem.includes('lacks pattern'))).toBe(true);
    expect(problems.some((problem) => problem.includes('created_by_ref is not an id'))).toBe(true);
    if (stixSchemasPresent) expect(problems.some((problem) => problem.includes('schema:'))).toBe(true);
  });

  it('the mapping names what each source knows: a lookalike domain is an indicator on it, a credential an account', async () => {
    const phishing = await bundleOf(incidents.get(8)!.matchId);
    const indicator = phishing.objects.find((object) => object.type === 'indicator')!;
    expect(indicator).toMatchObject({ pattern_type: 'stix', indicator_types: ['malicious-activity'] });
    expect(indicator.pattern).toMatch(/^\[domain-name:value = '[a-z0-9.-]+'\]$/);
    const sighting = phishing.objects.find((o) => o.type === 'sighting' && o.sighting_of_ref === indicator.id);
    expect(sighting).toBeDefined();
    const resolving = phishing.objects.filter((o) => o.type === 'domain-name' && o.resolves_to_refs);
    expect(resolving.length).toBeGreaterThan(0);
    for (const domain of resolving)
      for (const ref of domain.resolves_to_refs as string[]) expect(ref).toMatch(/^ipv[46]-addr--/);

    const leak = await bundleOf(incidents.get(3)!.matchId);
    const account = leak.objects.find((object) => object.type === 'user-account')!;
    expect(account).toMatchObject({ x_dragnet_has_password: true });
    expect(account).not.toHaveProperty('credential');
    expect(leak.objects.some((o) => o.type === 'email-addr' && o.belongs_to_ref === account.id)).toBe(true);

    const certificate = await bundleOf(incidents.get(9)!.matchId);
    expect(certificate.objects.find((o) => o.type === 'x509-certificate')).toMatchObject({
      hashes: { 'SHA-256': expect.stringMatching(/^[0-9A-F]{64}$/) },
    });
  });

  it('SCO ids follow the STIX 2.1 deterministic rule (UUIDv5 in the STIX namespace over the contributing properties)', async () => {
    const { v5 } = await import('uuid');
    const bundle = await bundleOf(incidents.get(8)!.matchId);
    for (const object of bundle.objects.filter((o) => o.type === 'domain-name' || o.type === 'url'))
      expect(object.id).toBe(
        `${object.type}--${v5(JSON.stringify({ value: object.value }), '00abedb4-aa42-466c-9c01-fed23315a9b7')}`,
      );
  });

  it('no export carries a password or a full card number', async () => {
    const secrets: string[] = [];
    for (const service of [3, 5]) {
      const rows = await t.container.store.db
        .selectFrom('match_hits')
        .select('data')
        .where('match_id', '=', incidents.get(service)!.matchId)
        .execute();
      for (const row of rows) {
        const revealed = findSource(service)!.revealHit!(JSON.parse(row.data), t.container.sourceContext);
        if (typeof revealed?.password === 'string') secrets.push(revealed.password);
      }
    }
    expect(secrets.length).toBeGreaterThan(5);
    for (const [service, { matchId }] of incidents) {
      const stix = (await exported(alice, matchId, 'stix')).body;
      for (const secret of secrets) expect(stix.includes(secret), `service ${service}`).toBe(false);
      // A paste or post quoting a password keeps the label, not the password.
      expect(stix).not.toMatch(/password: (?!\[redacted\])\S/i);
      const texts = [stix, (await exported(alice, matchId, 'csv')).body, (await exported(alice, matchId, 'json')).body];
      if (service === 3 || service === 5)
        for (const text of texts) for (const secret of secrets) expect(text.includes(secret)).toBe(false);
      if (service === 6 || service === 7) {
        const hits = (await alice.hits(matchId, { page_size: 100 })).results;
        for (const hit of hits) {
          const fullPan = new RegExp(`${String(hit.bin)}\\d{6,}`);
          for (const text of texts) expect(text).not.toMatch(fullPan);
          expect(stix).toContain(String(hit.masked_pan));
        }
        expect(stix).not.toMatch(/"cvv"|cvv2?:\s*\d/i);
      }
    }
  });

  it('two exports of an incident give the same objects with the same ids (re-imports do not duplicate)', async () => {
    for (const service of [1, 8, 9, 14]) {
      const first = await bundleOf(incidents.get(service)!.matchId);
      const second = await bundleOf(incidents.get(service)!.matchId);
      expect(second.objects).toEqual(first.objects);
      expect(new Set(first.objects.map((o) => o.id)).size).toBe(first.objects.length);
    }
  });

  it('CSV and JSON exports hold the hits as the hits endpoint shows them', async () => {
    for (const service of [1, 3, 8, 12]) {
      const { matchId } = incidents.get(service)!;
      const hits = (await alice.hits(matchId, { page_size: 100 })).results;
      const json = await exported(alice, matchId, 'json');
      expect(json.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(json.headers['content-disposition']).toBe(`attachment; filename="dragnet-incident-${matchId}.json"`);
      const body = JSON.parse(json.body) as { incident_id: number; tlp: string; count: number; hits: HitView[] };
      expect(body).toMatchObject({ incident_id: matchId, tlp: 'amber', count: hits.length });
      const byId = (list: HitView[]) => [...list].sort((a, b) => a.id - b.id);
      expect(byId(body.hits)).toEqual(byId(hits));

      const csv = await exported(alice, matchId, 'csv');
      expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
      expect(csv.headers['content-disposition']).toBe(`attachment; filename="dragnet-incident-${matchId}.csv"`);
      const lines = csv.body.trim().split('\n');
      expect(lines[0]).toMatch(/^"id","is_excluded",.*"hit_key"/);
      for (const hit of hits) expect(csv.body).toContain(`"${String(hit.hit_key)}"`);
    }
  });

  it("another organization's incident is a 404 in every format; an unknown format is a 400 naming format", async () => {
    const { matchId } = incidents.get(8)!;
    for (const format of ['csv', 'json', 'stix'])
      expectError(await bob.get(exportPath(matchId, format)), 404, 'not_found');
    expectError(await alice.get(exportPath(999_999, 'stix')), 404, 'not_found');
    const error = expectError(await alice.get(exportPath(matchId, 'xml')), 400, 'validation_failed');
    expect(JSON.stringify(error)).toContain('format');
    expectError(await t.request({ method: 'GET', url: exportPath(matchId, 'json') }), 401, 'unauthorized');
  });

  it('a rule takes a TLP 2.0 level (default amber, kept on an update that omits it) that marks its exported objects', async () => {
    const bad = await alice.create(ruleBody(8, { domain: 'acme-bank.com' }, 'tlp purple', { tlp: 'purple' }));
    const error = expectError(bad, 400, 'validation_failed');
    expect(JSON.stringify(error)).toContain('tlp');
    const rule = await alice.created(ruleBody(8, { domain: 'acme-bank.com' }, 'tlp red', { tlp: 'red' }));
    expect(rule.tlp).toBe('red');
    const matchId = await firstMatch(rule.id);
    const bundle = await bundleOf(matchId);
    expect(stixBundleProblems(bundle)).toEqual([]);
    for (const object of bundle.objects.filter((o) => o.type === 'indicator' || o.type === 'note'))
      expect(object.object_marking_refs).toEqual([TLP_RED]);
    expect(bundle.objects.find((o) => o.id === TLP_RED)).toMatchObject({
      name: 'TLP:RED',
      extensions: { 'extension-definition--60a3c5c5-0d10-413e-aab3-9e08dde9e88d': { tlp_2_0: 'red' } },
    });
    // The same hit under another rule is another finding: other SDO ids, the same SCO ids.
    const amber = await bundleOf(incidents.get(8)!.matchId);
    const sdoIds = (b: Bundle) => new Set(b.objects.filter((o) => o.type === 'indicator').map((o) => o.id));
    expect([...sdoIds(bundle)].some((id) => sdoIds(amber).has(id))).toBe(false);

    const body = ruleBody(8, { domain: 'acme-bank.com' }, 'tlp red');
    const kept = await alice.update(rule.id, body);
    expect(kept.statusCode, kept.body).toBe(200);
    expect(kept.json()).toMatchObject({ tlp: 'red' });
    const changed = await alice.update(rule.id, { ...body, tlp: 'amber+strict' });
    expect(changed.json()).toMatchObject({ tlp: 'amber+strict' });
    expect((await alice.getJson<{ tlp: string }>(rulePaths.get(rule.id))).tlp).toBe('amber+strict');
    expectError(await alice.update(rule.id, { ...body, tlp: 'AMBER' }), 400, 'validation_failed');
  });

  it('a 1,000-hit incident exports every hit and reads back with every object', async () => {
    const now = t.clock.now().getTime();
    await writeCorpus(t, [
      channel(
        'stix_bulk',
        Array.from({ length: 1000 }, (_, i) =>
          message(i + 1, `stixbulk offer ${i} https://bulk-${i}.example.net/login`, {
            date: now - (i + 1) * 60_000,
            userId: 1000 + (i % 7),
            links: [`https://bulk-${i}.example.net/login`],
          }),
        ),
      ),
    ]);
    const rule = await alice.created(ruleBody(1, { query: 'stixbulk' }, 'stix bulk'));
    const matchId = await firstMatch(rule.id);
    const hits = await createExportedHitReader(t.container.store.db).ofIncident(alice.orgId, matchId);
    expect(hits).toHaveLength(1000);
    const bundle = await bundleOf(matchId);
    expect(stixBundleProblems(bundle)).toEqual([]);
    const ids = new Set(bundle.objects.map((o) => o.id));
    const mapper = createStixMapper({ instanceName: 'Dragnet' });
    for (const hit of hits) for (const object of mapper.objectsOfHit(hit)) expect(ids.has(object.id)).toBe(true);
    expect(bundle.objects.filter((o) => o.type === 'note')).toHaveLength(1000);
    expect(bundle.objects.filter((o) => o.type === 'url')).toHaveLength(1000);
    // Seven authors: one user-account each, however many messages they wrote.
    expect(bundle.objects.filter((o) => o.type === 'user-account')).toHaveLength(7);
    const json = JSON.parse((await exported(alice, matchId, 'json')).body) as { hits: HitView[] };
    expect(json.hits).toHaveLength(1000);
    const csv = (await exported(alice, matchId, 'csv')).body;
    expect(csv.trim().split('\n')).toHaveLength(1001);
  }, 60_000);
});
