import { afterEach, describe, expect, it } from 'vitest';
import { channel, message } from '../support/corpus.ts';
import {
  createDeliveryKit,
  HOUR,
  messengerRule,
  requestsTo,
  slowAndQuickOrgs,
  writeCorpus,
} from '../support/rules-api.ts';
import type { TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';
import type { WebhookReceiver } from '../support/webhook-receiver.ts';
import { waitFor } from '../support/wait.ts';

const AT = new Date(Date.parse('2026-03-11T09:00:00Z'));

/**
 * One organization's slow webhook must not hold up another's notification: org A's receiver
 * takes the request and never answers (within a 30 s delivery timeout); org B's notification,
 * queued after A's, must arrive while A's attempt is still open.
 */
describe(`notifications: a slow receiver delays only its own organization (${testEngine})`, () => {
  let t: TestApp | undefined;
  let slow: WebhookReceiver | undefined;
  let quick: WebhookReceiver | undefined;

  // Each attempt on an app and receivers of its own: in full suites on a loaded two-core machine
  // A's webhook twice failed to reach its receiver within the wait (never reproduced alone or
  // under CPU hogs), and a retry needs a fresh outbox. A dispatcher that waits for A's receiver
  // before B's fails every attempt.
  afterEach(async () => {
    await slow?.close();
    await t?.close();
    await quick?.close();
  });

  it("org B's webhook arrives while org A's is still waiting for its receiver", { retry: 0, repeats: 9 }, async () => {
    const app = await slowAndQuickOrgs();
    ({ t, slow, quick } = app);
    const { alice, bob } = app;
    const kitA = await createDeliveryKit(alice, { tag: 'slow', receiver: app.slow });
    const kitB = await createDeliveryKit(bob, { tag: 'quick', receiver: app.quick });
    await alice.created(messengerRule(kitA, 'A', 'fairness-bank.com'));
    await bob.created(messengerRule(kitB, 'B', 'fairness-bank.com'));
    await writeCorpus(app.t, [
      channel('fairness_leaks', [message(1, 'fairness-bank.com combolist', { date: AT.getTime() - HOUR })]),
    ]);
    expect((await app.t.container.runner.tick(AT)).matches).toBe(2);
    // A's webhook notification is first in the outbox: a one-at-a-time dispatcher would send it first.
    const outbox = await app.t.container.store.db
      .selectFrom('notifications')
      .select(['id', 'org_id', 'channel'])
      .where('channel', '=', 'webhook')
      .orderBy('id')
      .execute();
    expect(outbox.map((n) => Number(n.org_id))).toEqual([alice.orgId, bob.orgId]);

    // Shown if a wait times out: where each notification and delivery attempt stood.
    const state = async () => ({
      outbox: await app.t.container.store.db
        .selectFrom('notifications')
        .select(['id', 'org_id', 'channel', 'status', 'claimed_by', 'sent_at'])
        .orderBy('id')
        .execute(),
      attempts: await app.t.container.store.db
        .selectFrom('delivery_attempts')
        .select(['org_id', 'channel', 'status', 'error', 'duration_ms', 'created_at'])
        .execute(),
      requests: { slow: app.slow.requests.length, quick: app.quick.requests.length },
      connections: { slow: app.slow.openConnections(), quick: app.quick.openConnections() },
      dispatchedAt,
      now: Date.now(),
    });
    const dispatchedAt = Date.now();
    const dispatch = app.t.container.notifier.dispatchPending();
    await waitFor("A's receiver has the request", () => requestsTo(app.slow, kitA).length === 1, { state, timeoutMs: 3000 });
    await waitFor("B's receiver has the request", () => requestsTo(app.quick, kitB).length === 1, { state });
    // B's delivery completes (its attempt is recorded) while A's is still open.
    await waitFor(
      "B's attempt is recorded",
      async () => (await bob.delivery.attempts({ channel: 'webhook' })).count === 1,
      { state },
    );
    expect((await bob.delivery.attempts({ channel: 'webhook' })).results).toMatchObject([
      { status: 'success', status_code: 204 },
    ]);
    expect((await alice.delivery.attempts({ channel: 'webhook' })).count).toBe(0);
    expect(requestsTo(app.slow, kitA)).toHaveLength(1);

    // A's receiver goes away: its attempt ends failed, and the dispatch with it.
    await app.slow.close();
    expect(await dispatch).toBe(4);
    expect((await alice.delivery.attempts({ channel: 'webhook' })).results).toMatchObject([
      { status: 'failed', status_code: null },
    ]);
  });
});
