import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.ts';
import { channel, message } from '../support/corpus.ts';
import {
  createDeliveryKit,
  createRulesApp,
  deliverPending,
  HOUR,
  iso,
  messengerRule,
  notificationsOf,
  requestsTo,
  rulesApi,
  rulesUser,
  runsOf,
  SMTP_AUTH,
  writeCorpus,
  type RulesApi,
} from '../support/rules-api.ts';
import { startSmtpTestServer, type SmtpTestServer } from '../support/smtp-test-server.ts';
import type { TestApp } from '../support/test-app.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

const T0 = Date.parse('2026-03-10T09:00:00Z');
const DAY = 24 * HOUR;

/**
 * A process that stops part-way, simulated with containers on one store: the first container
 * does part of the work and is closed (or the store is left as a killed process leaves it), a
 * new container on the same store carries on. kill.test.ts does the same with real processes.
 */
describe(`rules: restart after a crash loses nothing and sends nothing twice (${testEngine})`, () => {
  let location: TestStoreLocation;
  let smtp: SmtpTestServer;
  let receiver: WebhookReceiver;
  /** The process that "crashes"; replaced by a fresh one on the same store in each test. */
  let t: TestApp;
  let alice: RulesApi;

  beforeAll(async () => {
    [smtp, receiver] = await Promise.all([startSmtpTestServer({ auth: SMTP_AUTH }), startWebhookReceiver()]);
    location = await createTestStoreLocation();
    t = await createRulesApp({ location });
    alice = await rulesUser(t, 'Acme', 'alice@acme.test');
  });
  afterAll(async () => {
    await t?.close();
    await location?.drop();
    await Promise.all([smtp?.close(), receiver?.close()]);
  });

  /**
   * Another worker process as the store knows it: a row in `workers`, seen now. `dies()` moves
   * the clock past the heartbeats it would have had to send to count as alive (6 × 5 s).
   */
  async function aWorker(id: string) {
    const now = t.clock.now().getTime();
    await t.container.store.db
      .insertInto('workers')
      .values({ id, pid: 1, host: 'elsewhere', started_at: now, seen_at: now })
      .execute();
    return {
      id,
      dies: async () => t.clock.advance(60_000),
    };
  }

  /** What a worker killed between claiming a rule's run and committing its result leaves behind. */
  async function runLeftRunning(ruleId: number, window: { start: number; end: number }, workerId: string) {
    await t.container.store.db
      .insertInto('rule_runs')
      .values({
        org_id: alice.orgId,
        rule_id: ruleId,
        run_key: `${ruleId}:${window.end}`,
        window_start: window.start,
        window_end: window.end,
        status: 'running',
        claimed_by: workerId,
        created_at: window.end,
      })
      .execute();
  }

  /** Closes the current container and opens a new one on the same store (same clock time). */
  async function restart(): Promise<void> {
    const clock = createManualClock(t.clock.now());
    await t.close();
    t = await createRulesApp({ location, clock });
    alice = rulesApi(t, alice.token, alice.orgId, alice.userId, 'alice@acme.test');
  }

  it('a match recorded by a process that stopped before dispatching is delivered exactly once by the next process', async () => {
    const kit = await createDeliveryKit(alice, { tag: 'outbox', receiver, smtp });
    const rule = await alice.created(messengerRule(kit, 'Oscar', 'oscar-bank.com'));
    await writeCorpus(t, [channel('oscar_leaks', [message(1, 'oscar-bank.com access', { date: T0 + HOUR })])]);

    const report = await t.container.runner.tick(new Date(T0 + DAY));
    expect(report).toMatchObject({ ran: 1, matches: 1 });
    // The process stops here: the match and its outbox are committed, nothing was sent.
    await restart();
    expect(requestsTo(receiver, kit)).toHaveLength(0);
    expect((await notificationsOf(t, rule.id)).map((n) => n.status)).toEqual(['pending', 'pending']);

    // The new process re-runs the same tick: the window is done, nothing is evaluated twice.
    expect(await t.container.runner.tick(new Date(T0 + DAY))).toMatchObject({ due: 0, ran: 0, matches: 0 });
    expect(await deliverPending(t)).toBe(2);
    expect(await deliverPending(t)).toBe(0);
    expect(requestsTo(receiver, kit)).toHaveLength(1);
    expect(smtp.messages.filter((m) => m.to.includes(kit.recipient.email))).toHaveLength(1);
    expect((await alice.matches(rule.id)).count).toBe(1);
    expect((await notificationsOf(t, rule.id)).map((n) => n.status)).toEqual(['sent', 'sent']);
  });

  it('a window claimed by a worker that died before committing is run by the next worker that reaches it, once', async () => {
    const kit = await createDeliveryKit(alice, { tag: 'claimed', receiver });
    const rule = await alice.created(messengerRule(kit, 'Papa', 'papa-bank.com', { recipients: [] }));
    await writeCorpus(t, [channel('papa_leaks', [message(1, 'papa-bank.com combo', { date: T0 + 2 * DAY + HOUR })])]);
    const until = T0 + 3 * DAY;
    const worker = await aWorker('papa-worker');
    await runLeftRunning(rule.id, { start: T0, end: until }, worker.id);
    await restart();

    // While that worker is still seen, its run is left to it: nothing is recorded twice.
    await t.container.runner.tick(new Date(until));
    expect((await alice.find(rule.id))!.last_run).toBe(iso(T0));
    expect((await alice.matches(rule.id)).count).toBe(0);

    // Once it has missed its heartbeats, the next tick takes the run over.
    await worker.dies();
    await t.container.runner.tick(new Date(until));
    await deliverPending(t);
    const matches = (await alice.matches(rule.id)).results;
    expect(matches).toEqual([
      expect.objectContaining({ total_hits: 1, window_start: iso(T0), window_end: iso(until) }),
    ]);
    expect(requestsTo(receiver, kit)).toHaveLength(1);

    // And only once.
    await t.container.runner.tick(new Date(until));
    await t.container.runner.tick(new Date(until + 2 * DAY));
    await deliverPending(t);
    expect((await alice.matches(rule.id)).count).toBe(1);
    expect(requestsTo(receiver, kit)).toHaveLength(1);
    expect((await runsOf(t, rule.id)).map((run) => run.status)).toEqual(['empty', 'completed', 'empty']);
  });

  it('a window whose worker died is covered by the next window when no worker reached it before the hour turned; its run is closed, not left running', async () => {
    const kit = await createDeliveryKit(alice, { tag: 'turned', receiver });
    const rule = await alice.created(messengerRule(kit, 'Romeo', 'romeo-bank.com', { recipients: [] }));
    const lastRun = Date.parse((await alice.find(rule.id))!.last_run!);
    await writeCorpus(t, [
      channel('romeo_leaks', [message(1, 'romeo-bank.com combo', { date: lastRun + HOUR + 60_000 })]),
    ]);
    // The first window the rule (daily) is due for, and its worker's: the next one is an hour on.
    const until = lastRun - (lastRun % HOUR) + DAY + HOUR;
    const worker = await aWorker('romeo-runner');
    await runLeftRunning(rule.id, { start: lastRun, end: until }, worker.id);
    await worker.dies();

    await t.container.runner.tick(new Date(until + HOUR));
    await deliverPending(t);
    expect((await alice.matches(rule.id)).results).toEqual([
      expect.objectContaining({ total_hits: 1, window_start: iso(lastRun), window_end: iso(until + HOUR) }),
    ]);
    expect(requestsTo(receiver, kit)).toHaveLength(1);
    const runs = await runsOf(t, rule.id);
    expect(runs.map((run) => [run.window_end === null ? null : Number(run.window_end), run.status])).toEqual([
      [lastRun, 'empty'],
      [until, 'failed'],
      [until + HOUR, 'completed'],
    ]);
    expect(runs[1]!.error).toMatch(/worker died/);
  });

  it('a notification claimed by a dispatcher that died mid-send is marked failed once the dispatcher is taken for dead, never sent twice', async () => {
    const kit = await createDeliveryKit(alice, { tag: 'claim', receiver });
    const rule = await alice.created(messengerRule(kit, 'Quebec', 'quebec-bank.com', { recipients: [] }));
    await writeCorpus(t, [
      channel('quebec_leaks', [message(1, 'quebec-bank.com dump', { date: T0 + 4 * DAY + HOUR })]),
    ]);
    await t.container.runner.tick(new Date(T0 + 5 * DAY));
    const [notification] = await notificationsOf(t, rule.id);
    // A dispatcher claimed it and died before it sent anything.
    const worker = await aWorker('quebec-dispatcher');
    await t.container.store.db
      .updateTable('notifications')
      .set({ status: 'sending', claimed_by: worker.id })
      .where('id', '=', notification!.id)
      .execute();
    await restart();

    expect(await deliverPending(t)).toBe(0);
    expect((await notificationsOf(t, rule.id)).map((n) => n.status)).toEqual(['sending']);
    await worker.dies();
    // The dead dispatcher may have delivered it: spec 6.2 has no retry, so it is not sent again.
    expect(await deliverPending(t)).toBe(0);
    expect(requestsTo(receiver, kit)).toHaveLength(0);
    expect((await notificationsOf(t, rule.id)).map((n) => n.status)).toEqual(['failed']);
  });

  it("an async run's job claimed by a worker that died is run by another worker once the first is taken for dead", async () => {
    const kit = await createDeliveryKit(alice, { tag: 'lease', receiver });
    const rule = await alice.created({
      ...messengerRule(kit, 'Romeo scan', 'x', { recipients: [] }),
      service: 4,
      args: { query: 'romeo-bank.com' },
      frequency: 'weekly',
    });
    const db = t.container.store.db;
    const [match] = (await alice.matches(rule.id)).results;
    expect(match).toMatchObject({ status: 'pending' });
    const job = (await db.selectFrom('jobs').selectAll().where('type', '=', 'rules.complete-async-run').execute()).find(
      (row) => JSON.parse(row.payload).matchId === match!.id,
    )!;
    // A worker claimed the job and died.
    const worker = await aWorker('romeo-worker');
    await db
      .updateTable('jobs')
      .set({ status: 'running', attempts: 1, claimed_by: worker.id })
      .where('id', '=', job.id)
      .execute();
    await restart();

    expect(await t.container.jobs.runDue()).toBe(0);
    expect((await alice.matches(rule.id)).results).toEqual([expect.objectContaining({ status: 'pending' })]);
    await worker.dies();
    expect(await t.container.jobs.runDue()).toBe(1);
    expect(await t.container.jobs.runDue()).toBe(0);
    expect((await alice.matches(rule.id)).count).toBe(0);
    expect(
      await t.container.store.db
        .selectFrom('jobs')
        .select(['status', 'attempts'])
        .where('id', '=', job.id)
        .executeTakeFirstOrThrow(),
    ).toEqual({ status: 'done', attempts: 2 });
  });
});
