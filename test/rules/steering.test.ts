import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { channel, message } from '../support/corpus.ts';
import { expectError, fieldsOf } from '../support/http.ts';
import {
  createDeliveryKit,
  createRulesApp,
  deliverPending,
  HOUR,
  iso,
  messengerRule,
  notificationsOf,
  payloadOf,
  requestsTo,
  rulePaths,
  rulesUser,
  runsOf,
  tickAndDeliver,
  writeCorpus,
  type DeliveryKit,
  type HitView,
  type MatchView,
  type RulesApi,
} from '../support/rules-api.ts';
import type { TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';
import { sourceCatalog } from '../../src/modules/sources/index.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

/** Each test starts at its own day, a month apart, with its own query terms and webhook path. */
const START = Date.parse('2026-05-04T09:00:00Z');
const DAY = 24 * HOUR;
const base = (test: number) => START + test * 30 * DAY;

const steerPaths = {
  pause: (id: number) => `/service/alert_system_rule_pause/${id}/`,
  resume: (id: number) => `/service/alert_system_rule_resume/${id}/`,
  state: (id: number) => `/service/alert_system_rule_pause_state/${id}/`,
  paused: '/service/alert_system_rule_paused_list/',
  runNow: (id: number) => `/service/alert_system_rule_run_now/${id}/`,
  preview: '/service/alert_system_rule_preview/',
};

interface PauseState {
  rule_id: number;
  is_paused: boolean;
  paused_at: string | null;
  paused_by: number | null;
}
interface RunNowResult {
  rule_id: number;
  ran: boolean;
  window_start: string | null;
  window_end: string;
  match: MatchView | null;
}
interface PreviewResult {
  count: number;
  page: number;
  page_size: number;
  from: string;
  to: string;
  results: HitView[];
}

describe(`rules: pause, resume, run now and preview (${testEngine})`, () => {
  let t: TestApp;
  let alice: RulesApi;
  let gina: RulesApi;
  let receiver: WebhookReceiver;
  let n = 0;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    t = await createRulesApp();
    alice = await rulesUser(t, 'Acme', 'alice@acme.test');
    gina = await rulesUser(t, 'Globex', 'gina@globex.test');
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  const post = (api: RulesApi, url: string, body?: unknown) =>
    t.request({ method: 'POST', url, token: api.token, body });
  const postOk = async <T>(url: string, body?: unknown): Promise<T> => {
    const response = await post(alice, url, body);
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as T;
  };
  const newKit = () => createDeliveryKit(alice, { tag: `steer${++n}`, receiver });
  const matchesOf = async (ruleId: number) => (await alice.matches(ruleId, { page_size: 100 })).results;
  const lastRun = async (ruleId: number) => (await alice.find(ruleId))!.last_run;
  const auditEvents = async (ruleId: number) =>
    (
      await alice.getJson<{ results: { event: string; target_id: number; actor_user_id: number }[] }>(
        '/service/audit_log/?page_size=100',
      )
    ).results
      .filter((entry) => entry.target_id === ruleId && entry.event.startsWith('rule.'))
      .map((entry) => [entry.event, entry.actor_user_id]);
  const moveTo = async (ms: number) => {
    t.clock.set(new Date(ms));
    await alice.relogin();
    await gina.relogin();
  };

  it('a paused rule is passed over by the tick; resumed, its next run covers everything since its last run', async () => {
    const at = base(0);
    await moveTo(at);
    await writeCorpus(t, [channel('steer_a', [message(1, 'pausetest-bank.com dump', { date: at - HOUR })])]);
    const kit = await newKit();
    const rule = await alice.created(messengerRule(kit, 'Paused watch', 'pausetest-bank.com'));
    expect(rule.last_run).toBe(iso(at));
    expect(await matchesOf(rule.id)).toHaveLength(1);

    const paused = await postOk<PauseState>(steerPaths.pause(rule.id));
    expect(paused).toEqual({ rule_id: rule.id, is_paused: true, paused_at: iso(at), paused_by: alice.userId });
    // Pausing twice changes nothing and records nothing more.
    expect(await postOk<PauseState>(steerPaths.pause(rule.id))).toEqual(paused);
    expect(await alice.getJson(steerPaths.state(rule.id))).toEqual(paused);
    expect(await alice.getJson(steerPaths.paused)).toEqual([paused]);
    // The spec's rule is unchanged by a pause.
    expect(await alice.getJson(`/service/alert_system_alert_get_alert_rule/${rule.id}/`)).toEqual(rule);

    // A hit that appears while the rule is paused; the daily rule is due a day later.
    await writeCorpus(t, [channel('steer_a', [message(2, 'pausetest-bank.com again', { date: at + 2 * HOUR })])]);
    const runsBefore = (await runsOf(t, rule.id)).length;
    await moveTo(at + 25 * HOUR);
    await tickAndDeliver(t);
    expect((await runsOf(t, rule.id)).length).toBe(runsBefore);
    expect(await matchesOf(rule.id)).toHaveLength(1);
    expect(await lastRun(rule.id)).toBe(iso(at));
    expect(requestsTo(receiver, kit)).toHaveLength(1);

    const resumed = await postOk<PauseState>(steerPaths.resume(rule.id));
    expect(resumed).toEqual({ rule_id: rule.id, is_paused: false, paused_at: null, paused_by: null });
    expect(await alice.getJson(steerPaths.paused)).toEqual([]);
    await moveTo(at + 26 * HOUR);
    await tickAndDeliver(t);
    const [newest] = await matchesOf(rule.id);
    // Nothing was lost: the window starts at the run before the pause and holds the paused time's hit.
    expect(newest).toMatchObject({ window_start: iso(at), window_end: iso(at + 26 * HOUR), new_hits: 1 });
    expect((await alice.hits(newest!.id)).results.map((hit) => hit.message_id)).toEqual([2]);
    expect(requestsTo(receiver, kit)).toHaveLength(2);
    expect(await auditEvents(rule.id)).toEqual([
      ['rule.resumed', alice.userId],
      ['rule.paused', alice.userId],
    ]);
  });

  it('run now records a match over (last_run, now] and notifies the webhook; a paused rule runs too', async () => {
    const at = base(1);
    await moveTo(at);
    await writeCorpus(t, [channel('steer_b', [message(1, 'runnow-bank.com old', { date: at - HOUR })])]);
    const kit = await newKit();
    const rule = await alice.created(messengerRule(kit, 'Run now watch', 'runnow-bank.com'));
    await deliverPending(t);
    expect(requestsTo(receiver, kit)).toHaveLength(1);
    await postOk(steerPaths.pause(rule.id));

    await writeCorpus(t, [channel('steer_b', [message(2, 'runnow-bank.com fresh', { date: at + 10 * 60_000 })])]);
    await moveTo(at + 30 * 60_000);
    const ran = await postOk<RunNowResult>(steerPaths.runNow(rule.id));
    expect(ran).toMatchObject({
      rule_id: rule.id,
      ran: true,
      window_start: iso(at),
      window_end: iso(at + 30 * 60_000),
      match: { rule_id: rule.id, status: 'complete', new_hits: 1, window_start: iso(at) },
    });
    expect((await alice.hits(ran.match!.id)).results.map((hit) => hit.message_id)).toEqual([2]);
    expect(await lastRun(rule.id)).toBe(iso(at + 30 * 60_000));
    expect(await deliverPending(t)).toBe(2);
    const hooks = requestsTo(receiver, kit);
    expect(hooks).toHaveLength(2);
    expect(payloadOf(hooks[1]!).results_url).toBe(
      `https://dashboard.dragnet.test${rulePaths.matchLink(ran.match!.id, alice.orgId)}`,
    );

    // Nothing new since: a run, no match, no notification.
    await moveTo(at + 40 * 60_000);
    const empty = await postOk<RunNowResult>(steerPaths.runNow(rule.id));
    expect(empty).toMatchObject({ ran: true, match: null, window_start: iso(at + 30 * 60_000) });
    expect(await deliverPending(t)).toBe(0);
    expect(await matchesOf(rule.id)).toHaveLength(2);
  });

  it('preview returns the hits a run would find in a past window, and stores and sends nothing', async () => {
    const at = base(2);
    await moveTo(at);
    await writeCorpus(t, [
      channel('steer_c', [
        message(1, 'preview-bank.com first', { date: at - 3 * HOUR, userId: 5 }),
        message(2, 'preview-bank.com second', { date: at - 2 * HOUR, userId: 6 }),
        message(3, 'preview-bank.com earlier', { date: at - 5 * DAY }),
        message(4, 'unrelated text', { date: at - HOUR }),
      ]),
    ]);
    const kit = await newKit();
    const rule = await alice.created(messengerRule(kit, 'Preview watch', 'preview-bank.com'));
    await deliverPending(t);
    const [match] = await matchesOf(rule.id);
    const stored = (await alice.hits(match!.id, { page_size: 100 })).results;
    const notificationsBefore = (await notificationsOf(t, rule.id)).length;
    const hooksBefore = receiver.requests.length;

    const window = { from: iso(at - DAY), to: iso(at) };
    const byRule = await postOk<PreviewResult>(steerPaths.preview, { rule_id: rule.id, ...window });
    expect(byRule).toMatchObject({ count: 2, page: 1, page_size: 20, ...window });
    // The hits as the match shows them, without the stored row's id.
    const withoutId = ({ id: _id, ...hit }: HitView) => hit;
    expect(byRule.results).toEqual(stored.filter((hit) => hit.message_id !== 3).map(withoutId));

    // A body not stored yet, paged; an exclusion of the stored rule shows on its preview.
    const byBody = await postOk<PreviewResult>(steerPaths.preview, {
      service: 1,
      args: { query: 'preview-bank.com' },
      from: iso(at - 6 * DAY),
      to: iso(at),
      page: 2,
      page_size: 2,
    });
    expect(byBody.count).toBe(3);
    expect(byBody.results.map((hit) => hit.message_id)).toEqual([3]);
    await alice.createExclusion(rule.id, { field: 'user_id', value: '5' });
    const excluded = await postOk<PreviewResult>(steerPaths.preview, { rule_id: rule.id, ...window });
    expect(excluded.results.map((hit) => [hit.message_id, hit.is_excluded])).toEqual([
      [2, false],
      [1, true],
    ]);

    expect(await matchesOf(rule.id)).toHaveLength(1);
    expect((await notificationsOf(t, rule.id)).length).toBe(notificationsBefore);
    expect(await deliverPending(t)).toBe(0);
    expect(receiver.requests.length).toBe(hooksBefore);
    expect(await lastRun(rule.id)).toBe(iso(at));
  });

  it("previews every source that has data: the example args over the last 31 days find the demo's hits of that window", async () => {
    // A store of its own: the messenger example's channel ids are those of the demo's channels on a fresh store.
    const fresh = await createRulesApp();
    const at = fresh.clock.now().getTime();
    const since = at - 31 * DAY;
    onTestFinished(() => fresh.close());
    const analyst = await rulesUser(fresh, 'Acme', 'alice@acme.test');
    // distinct_leak has no demo of its own: it reads the credentials filtered_leak's demo loads.
    for (const source of sourceCatalog) await source.demo?.(fresh.container.sourceContext, at);
    for (const source of sourceCatalog.filter((entry) => entry.hasData)) {
      const args = Object.fromEntries(
        source.params.filter((param) => param.example !== undefined).map((param) => [param.name, param.example]),
      );
      // What a run since the beginning finds, narrowed to the window by each hit's own date.
      const everything = await source.match(fresh.container.sourceContext, args, { since: null, until: at }, 10_000);
      const inWindow = everything.hits.filter((hit) => hit.date > since).map((hit) => hit.key);
      const response = await fresh.request({
        method: 'POST',
        url: steerPaths.preview,
        token: analyst.token,
        body: { service: source.id, args, from: iso(since), to: iso(at), page_size: 100 },
      });
      expect(response.statusCode, `${source.name}: ${response.body}`).toBe(200);
      const preview = response.json() as PreviewResult;
      expect(inWindow.length, source.name).toBeGreaterThan(0);
      expect(preview.count, source.name).toBe(inWindow.length);
      expect(preview.results.map((hit) => hit.hit_key).sort(), source.name).toEqual(inWindow.slice(0, 100).sort());
    }
  });

  it('a preview window or target that does not hold is a 400 naming the field', async () => {
    const at = base(3);
    await moveTo(at);
    const kit = await newKit();
    const rule = await alice.created(messengerRule(kit, 'Window checks', 'window-bank.com'));
    const cases: [unknown, string][] = [
      [{ rule_id: rule.id, from: 'yesterday', to: iso(at) }, 'from'],
      [{ rule_id: rule.id, from: iso(at - HOUR), to: 'now' }, 'to'],
      [{ rule_id: rule.id, from: iso(at), to: iso(at - HOUR) }, 'to'],
      [{ rule_id: rule.id, from: iso(at - 32 * DAY), to: iso(at) }, 'to'],
      [{ rule_id: rule.id, from: iso(at - HOUR), to: iso(at + HOUR) }, 'to'],
      [{ from: iso(at - HOUR), to: iso(at) }, 'rule_id'],
      [{ rule_id: rule.id, service: 1, from: iso(at - HOUR), to: iso(at) }, 'rule_id'],
      [{ rule_id: rule.id, args: { query: 'x' }, from: iso(at - HOUR), to: iso(at) }, 'args'],
      [{ service: 1, args: { query: '' }, from: iso(at - HOUR), to: iso(at) }, 'args.query'],
      [{ service: 999, args: {}, from: iso(at - HOUR), to: iso(at) }, 'service'],
      [{ rule_id: rule.id, from: iso(at - HOUR), to: iso(at), page: 101, page_size: 100 }, 'page'],
    ];
    for (const [body, field] of cases) {
      const error = expectError(await post(alice, steerPaths.preview, body), 400, 'validation_failed');
      expect(fieldsOf(error), JSON.stringify(body)).toEqual([field]);
    }
    // The longest window is accepted.
    await postOk(steerPaths.preview, { rule_id: rule.id, from: iso(at - 31 * DAY), to: iso(at) });
  });

  it("another organization's rule is not found; a deleted rule cannot be paused or run", async () => {
    const at = base(4);
    await moveTo(at);
    const kit: DeliveryKit = await newKit();
    const rule = await alice.created(messengerRule(kit, 'Not yours', 'private-bank.com'));
    const window = { from: iso(at - HOUR), to: iso(at) };
    for (const [url, body] of [
      [steerPaths.pause(rule.id), undefined],
      [steerPaths.resume(rule.id), undefined],
      [steerPaths.runNow(rule.id), undefined],
      [steerPaths.preview, { rule_id: rule.id, ...window }],
    ] as const) {
      expectError(await post(gina, url, body), 404, 'not_found');
    }
    expectError(await gina.get(steerPaths.state(rule.id)), 404, 'not_found');
    expect(await gina.getJson(steerPaths.paused)).toEqual([]);
    expect((await alice.getJson<PauseState>(steerPaths.state(rule.id))).is_paused).toBe(false);

    expect((await alice.remove(rule.id)).statusCode).toBe(200);
    for (const url of [steerPaths.pause(rule.id), steerPaths.resume(rule.id), steerPaths.runNow(rule.id)])
      expectError(await post(alice, url), 409, 'conflict');
  });
});
