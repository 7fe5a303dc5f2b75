import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { relative, type ListPage } from '../support/delivery-api.ts';
import { channel, message } from '../support/corpus.ts';
import { expectError, fieldsOf } from '../support/http.ts';
import {
  createDeliveryKit,
  createRulesApp,
  HOUR,
  messengerRule,
  rulesUser,
  withQuery,
  writeCorpus,
  type ExclusionView,
  type MatchView,
  type RulesApi,
  type RuleView,
} from '../support/rules-api.ts';
import type { TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

/** The incident endpoints (docs/api.md "Incidents"). */
const incidentPaths = {
  list: '/service/alert_system_incident_list/',
  counts: '/service/alert_system_incident_counts/',
  get: (id: number) => `/service/alert_system_incident_get/${id}/`,
  update: (id: number) => `/service/alert_system_incident_update/${id}/`,
  bulk: '/service/alert_system_incident_bulk_update/',
  events: (id: number) => `/service/alert_system_incident_events/${id}/`,
  assignees: '/service/alert_system_incident_assignees/',
};

interface IncidentView {
  id: number;
  rule_id: number;
  rule_name: string;
  source: string | null;
  source_alias: string | null;
  incident_status: string;
  assignee: { id: number; email: string } | null;
  status_changed_at: string | null;
  status_changed_by: number | null;
  new_hits: number;
  excluded_hits: number;
  notes_count: number;
  created_at: string;
}

interface EventView {
  kind: string;
  from: string | null;
  to: string | null;
  note: string | null;
  user: { id: number; email: string } | null;
  created_at: string;
}

interface AuditView {
  event: string;
  actor_email: string | null;
  target_type: string;
  target_id: number;
  target_name: string | null;
  details: Record<string, unknown>;
  created_at: string;
}

const T0 = Date.parse('2026-01-15T12:00:00Z');

describe(`incidents: the inbox across rules (${testEngine})`, () => {
  let t: TestApp;
  let alice: RulesApi;
  let bob: RulesApi;
  let gina: RulesApi;
  let mike: RulesApi;
  let carolId: number;
  const rules: Record<'alpha' | 'beta' | 'gamma', RuleView> = {} as never;
  const incidents: Record<'alpha' | 'beta' | 'gamma' | 'globex', number> = {} as never;

  const post = (who: RulesApi, url: string, body: unknown) =>
    t.request({ method: 'POST', url, token: who.token, body });
  const list = (who: RulesApi, query: Parameters<typeof withQuery>[1] = {}) =>
    who.getJson<ListPage<IncidentView>>(withQuery(incidentPaths.list, query));
  const listedIds = async (query: Parameters<typeof withQuery>[1] = {}) =>
    (await list(alice, { page_size: 100, ...query })).results.map((incident) => incident.id);
  const incident = (id: number) => alice.getJson<IncidentView>(incidentPaths.get(id));
  const auditOf = async (event: string) =>
    (await alice.getJson<ListPage<AuditView>>(withQuery('/service/audit_log/', { event }))).results;

  /** alpha, beta and gamma each match once, an hour apart (the clock moves between them); Globex has its own. */
  beforeAll(async () => {
    t = await createRulesApp();
    t.clock.set(new Date(T0));
    await t.container.organizations.create('Watch');
    alice = await rulesUser(t, 'Acme', 'alice@acme.test');
    bob = await rulesUser(t, 'Acme', 'bob@acme.test');
    carolId = (await t.createUser({ org: 'Acme', email: 'carol@acme.test' })).id;
    await t.container.users.setActive('carol@acme.test', false);
    gina = await rulesUser(t, 'Globex', 'gina@globex.test');
    mike = await rulesUser(t, 'Watch', 'mike@watch.test');
    await t.container.organizations.update('Acme', { managedBy: 'Watch' });
    await writeCorpus(t, [
      channel('inc_leaks', [
        message(1, 'alpha-bank.com dump', { date: T0 - 3 * HOUR, userId: 1 }),
        message(2, 'alpha-bank.com more', { date: T0 - 2 * HOUR, userId: 2 }),
        message(3, 'beta-bank.com combo', { date: T0 - 2 * HOUR, userId: 3 }),
        message(4, 'gamma-bank.com logs', { date: T0 - HOUR, userId: 4 }),
      ]),
    ]);
    const kit = await createDeliveryKit(alice, { tag: 'acme' });
    const ginaKit = await createDeliveryKit(gina, { tag: 'globex' });
    for (const name of ['alpha', 'beta', 'gamma'] as const) {
      rules[name] = await alice.created(messengerRule(kit, `Watch ${name}`, `${name}-bank.com`));
      [{ id: incidents[name] }] = (await alice.matches(rules[name].id)).results as [MatchView];
      t.clock.advance(HOUR);
    }
    const globexRule = await gina.created(messengerRule(ginaKit, 'Globex alpha', 'alpha-bank.com'));
    [{ id: incidents.globex }] = (await gina.matches(globexRule.id)).results as [MatchView];
  });
  afterAll(async () => {
    await t?.close();
  });

  it("lists the organization's incidents newest first, each with its rule, source, status and counts", async () => {
    const page = await list(alice);
    expect(page.count).toBe(3);
    expect(page.results.map((i) => i.id)).toEqual([incidents.gamma, incidents.beta, incidents.alpha]);
    expect(page.results[2]).toMatchObject({
      id: incidents.alpha,
      rule_id: rules.alpha.id,
      rule_name: 'Watch alpha',
      source: 'messenger',
      source_alias: 'Messenger channels',
      incident_status: 'new',
      assignee: null,
      status_changed_at: null,
      new_hits: 2,
      excluded_hits: 0,
      notes_count: 0,
      created_at: new Date(T0).toISOString(),
    });
    expect(await alice.getJson(incidentPaths.counts)).toEqual({
      new: 3,
      acknowledged: 0,
      resolved: 0,
      false_positive: 0,
    });
  });

  it('pages with page_size through next and previous, keeping the filters', async () => {
    const first = await list(alice, { page_size: 2, source: 'messenger' });
    expect(first).toMatchObject({ count: 3, previous: null });
    expect(first.results.map((i) => i.id)).toEqual([incidents.gamma, incidents.beta]);
    expect(first.next).toContain('source=messenger');
    const second = await alice.getJson<ListPage<IncidentView>>(relative(first.next!));
    expect(second.results.map((i) => i.id)).toEqual([incidents.alpha]);
    expect(second.next).toBeNull();
    const back = await alice.getJson<ListPage<IncidentView>>(relative(second.previous!));
    expect(back.results.map((i) => i.id)).toEqual([incidents.gamma, incidents.beta]);
  });

  it('filters by rule, source and creation time; a bad source or date is a 400 naming it', async () => {
    expect(await listedIds({ rule_id: rules.beta.id })).toEqual([incidents.beta]);
    expect(await listedIds({ source: 'paste_site' })).toEqual([]);
    expect(await listedIds({ created_after: new Date(T0 + HOUR).toISOString() })).toEqual([
      incidents.gamma,
      incidents.beta,
    ]);
    expect(await listedIds({ created_before: new Date(T0 + HOUR).toISOString() })).toEqual([incidents.alpha]);
    for (const [query, field] of [
      [{ source: 'no_such_source' }, 'source'],
      [{ created_after: 'yesterday' }, 'created_after'],
      [{ status: 'open' }, 'status'],
      [{ assignee_id: alice.userId, unassigned: true }, 'unassigned'],
    ] as const) {
      const error = expectError(await alice.get(withQuery(incidentPaths.list, query)), 400, 'validation_failed');
      expect(fieldsOf(error).join(), JSON.stringify(query)).toContain(field);
    }
  });

  it('acknowledge with a note: the status, who and when, the note and its events', async () => {
    t.clock.advance(10 * 60_000);
    const at = t.clock.now().toISOString();
    const response = await post(alice, incidentPaths.update(incidents.alpha), {
      status: 'acknowledged',
      note: 'Looking at the dump',
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      incident_status: 'acknowledged',
      status_changed_at: at,
      status_changed_by: alice.userId,
      notes_count: 1,
    });
    const events = await alice.getJson<EventView[]>(incidentPaths.events(incidents.alpha));
    expect(events).toEqual([
      expect.objectContaining({ kind: 'status', from: 'new', to: 'acknowledged', created_at: at }),
      expect.objectContaining({ kind: 'note', note: 'Looking at the dump', created_at: at }),
    ]);
    expect(events.map((e) => e.user?.email)).toEqual(['alice@acme.test', 'alice@acme.test']);
    expect((await alice.getJson<Record<string, number>>(incidentPaths.counts)).acknowledged).toBe(1);
  });

  it('filters by status (repeatable)', async () => {
    expect(await listedIds({ status: 'acknowledged' })).toEqual([incidents.alpha]);
    expect(await listedIds({ status: ['new', 'acknowledged'] })).toEqual([
      incidents.gamma,
      incidents.beta,
      incidents.alpha,
    ]);
    expect(await listedIds({ status: 'new' })).toEqual([incidents.gamma, incidents.beta]);
  });

  it('assigns to an active user of the organization; filters by assignee and unassigned', async () => {
    const assignees = await alice.getJson<{ id: number; email: string }[]>(incidentPaths.assignees);
    expect(assignees.map((u) => u.email)).toEqual(['alice@acme.test', 'bob@acme.test']);
    const response = await post(alice, incidentPaths.update(incidents.beta), { assignee_id: bob.userId });
    expect(response.json()).toMatchObject({ assignee: { id: bob.userId, email: 'bob@acme.test' } });
    expect(await listedIds({ assignee_id: bob.userId })).toEqual([incidents.beta]);
    expect(await listedIds({ unassigned: true })).toEqual([incidents.gamma, incidents.alpha]);
    const events = await alice.getJson<EventView[]>(incidentPaths.events(incidents.beta));
    expect(events).toEqual([expect.objectContaining({ kind: 'assignee', from: null, to: 'bob@acme.test' })]);
  });

  it('an assignee of another organization, a disabled one or an unknown id is a 400 on assignee_id and nothing changes', async () => {
    for (const assignee_id of [gina.userId, carolId, mike.userId, 999_999]) {
      const error = expectError(
        await post(alice, incidentPaths.update(incidents.gamma), { status: 'resolved', assignee_id, note: 'x' }),
        400,
        'validation_failed',
      );
      expect(fieldsOf(error)).toEqual(['assignee_id']);
    }
    expect(await incident(incidents.gamma)).toMatchObject({ incident_status: 'new', assignee: null, notes_count: 0 });
    expect(await alice.getJson(incidentPaths.events(incidents.gamma))).toEqual([]);
  });

  it('bad bodies are 400s naming the field', async () => {
    for (const [body, field] of [
      [{}, 'status'],
      [{ status: 'closed' }, 'status'],
      [{ note: '' }, 'note'],
      [{ status: 'resolved', exclude_hits: true }, 'exclude_hits'],
      [{ status: 'resolved', extra: 1 }, 'extra'],
    ] as const) {
      const error = expectError(await post(alice, incidentPaths.update(incidents.gamma), body), 400);
      expect(fieldsOf(error).join(), JSON.stringify(body)).toContain(field);
    }
    expect((await incident(incidents.gamma)).incident_status).toBe('new');
  });

  it('false_positive with exclude_hits excludes every hit of the incident by hit_key, in one go', async () => {
    const response = await post(alice, incidentPaths.update(incidents.alpha), {
      status: 'false_positive',
      exclude_hits: true,
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ incident_status: 'false_positive', new_hits: 0, excluded_hits: 2 });
    const hits = await alice.hits(incidents.alpha);
    const exclusions = await alice.exclusions(rules.alpha.id);
    expect(exclusions.map((e: ExclusionView) => [e.field, e.value]).sort()).toEqual(
      hits.results.map((h) => ['hit_key', h.hit_key]).sort(),
    );
    expect(hits.results.every((h) => h.is_excluded)).toBe(true);
    expect((await alice.find(rules.alpha.id))!.total_matches_count).toBe(0);
  });

  it('exclude_hits on a deleted rule is a 409 and changes nothing', async () => {
    expect((await alice.remove(rules.gamma.id)).statusCode).toBe(200);
    const response = await post(alice, incidentPaths.update(incidents.gamma), {
      status: 'false_positive',
      exclude_hits: true,
    });
    expectError(response, 409, 'conflict');
    expect(await incident(incidents.gamma)).toMatchObject({ incident_status: 'new', excluded_hits: 0 });
    expect((await alice.restore(rules.gamma.id)).statusCode).toBe(200);
  });

  it('bulk: one status for several incidents, each with its event', async () => {
    const response = await post(alice, incidentPaths.bulk, {
      ids: [incidents.beta, incidents.gamma],
      status: 'resolved',
    });
    expect(response.json()).toEqual({ updated: 2, ids: expect.arrayContaining([incidents.beta, incidents.gamma]) });
    expect(await listedIds({ status: 'resolved' })).toEqual([incidents.gamma, incidents.beta]);
    const events = await alice.getJson<EventView[]>(incidentPaths.events(incidents.gamma));
    expect(events).toEqual([expect.objectContaining({ kind: 'status', from: 'new', to: 'resolved' })]);
    // Those already resolved are left as they were.
    expect((await post(alice, incidentPaths.bulk, { ids: [incidents.gamma], status: 'resolved' })).json()).toEqual({
      updated: 0,
      ids: [],
    });
  });

  it("bulk with another organization's id or an unknown one is a 404 and nothing changes", async () => {
    for (const foreign of [incidents.globex, 999_999]) {
      const response = await post(alice, incidentPaths.bulk, { ids: [incidents.beta, foreign], status: 'new' });
      expectError(response, 404, 'not_found');
    }
    expect((await incident(incidents.beta)).incident_status).toBe('resolved');
    expect((await gina.getJson<IncidentView>(incidentPaths.get(incidents.globex))).incident_status).toBe('new');
    for (const ids of [[], Array.from({ length: 501 }, (_, i) => i + 1)]) {
      expect(fieldsOf(expectError(await post(alice, incidentPaths.bulk, { ids, status: 'new' }), 400))).toEqual([
        'ids',
      ]);
    }
  });

  it('every status change, assignment and note is in the audit log, with who and when', async () => {
    const statuses = await auditOf('incident.status_changed');
    const changes = statuses.map((e) => [e.target_id, e.details.from, e.details.to]);
    // Newest first; the two of one bulk change in either order.
    expect(changes.slice(0, 2)).toEqual(
      expect.arrayContaining([
        [incidents.beta, 'new', 'resolved'],
        [incidents.gamma, 'new', 'resolved'],
      ]),
    );
    expect(changes.slice(2)).toEqual([
      [incidents.alpha, 'acknowledged', 'false_positive'],
      [incidents.alpha, 'new', 'acknowledged'],
    ]);
    expect(statuses.find((e) => e.details.to === 'false_positive')).toMatchObject({
      actor_email: 'alice@acme.test',
      target_type: 'incident',
      target_name: 'Watch alpha',
      details: { excluded_hits: 2 },
    });
    expect(await auditOf('incident.assigned')).toEqual([
      expect.objectContaining({ target_id: incidents.beta, details: { from: null, to: 'bob@acme.test' } }),
    ]);
    expect(await auditOf('incident.note_added')).toEqual([
      expect.objectContaining({ target_id: incidents.alpha, actor_email: 'alice@acme.test' }),
    ]);
  });

  it("another organization's incident is a 404 everywhere, and its lists and counts are its own", async () => {
    for (const [method, url, body] of [
      ['GET', incidentPaths.get(incidents.alpha), undefined],
      ['GET', incidentPaths.events(incidents.alpha), undefined],
      ['POST', incidentPaths.update(incidents.alpha), { note: 'mine now' }],
    ] as const) {
      expectError(await t.request({ method, url, token: gina.token, body }), 404, 'not_found');
    }
    expect((await list(gina)).results.map((i) => i.id)).toEqual([incidents.globex]);
    expect(await gina.getJson(incidentPaths.counts)).toEqual({
      new: 1,
      acknowledged: 0,
      resolved: 0,
      false_positive: 0,
    });
    expect((await incident(incidents.alpha)).notes_count).toBe(1);
    for (const url of [incidentPaths.list, incidentPaths.counts, incidentPaths.assignees]) {
      expect((await t.request({ method: 'GET', url })).statusCode).toBe(401);
    }
  });

  it("an MSSP analyst works a managed organization's incidents with org_id, logged in its audit log", async () => {
    const acme = alice.orgId;
    const page = await mike.getJson<ListPage<IncidentView>>(withQuery(incidentPaths.list, { org_id: acme }));
    expect(page.count).toBe(3);
    expect(page.results.map((i) => i.id)).toEqual([incidents.gamma, incidents.beta, incidents.alpha]);
    const url = withQuery(incidentPaths.update(incidents.gamma), { org_id: acme });
    expect(fieldsOf(expectError(await post(mike, url, { assignee_id: mike.userId }), 400))).toEqual(['assignee_id']);
    const response = await post(mike, url, { status: 'acknowledged' });
    expect(response.json()).toMatchObject({ incident_status: 'acknowledged', status_changed_by: mike.userId });
    const [latest] = await auditOf('incident.status_changed');
    expect(latest).toMatchObject({ actor_email: 'mike@watch.test', target_id: incidents.gamma });
    expectError(await post(mike, incidentPaths.update(incidents.gamma), { status: 'new' }), 404, 'not_found');
  });
});
