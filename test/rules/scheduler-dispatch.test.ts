import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScheduler } from '../../src/jobs/scheduler.ts';
import { channel, message } from '../support/corpus.ts';
import {
  createDeliveryKit,
  HOUR,
  messengerRule,
  requestsTo,
  runsOf,
  slowAndQuickOrgs,
  writeCorpus,
  type RulesApi,
} from '../support/rules-api.ts';
import type { TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';
import type { WebhookReceiver } from '../support/webhook-receiver.ts';
import { waitFor } from '../support/wait.ts';

/**
 * The worker's scheduler, as `dragnet serve` and `dragnet worker` run it: org A's webhook
 * receiver takes the request and never answers (within a 30 s delivery timeout); meanwhile org
 * B's new rule must still be run at the next tick and its notification delivered.
 */
describe(`scheduler: a slow delivery does not hold up rule runs (${testEngine})`, () => {
  let t: TestApp;
  let alice: RulesApi;
  let bob: RulesApi;
  let slow: WebhookReceiver;
  let quick: WebhookReceiver;
  let scheduler: ReturnType<typeof startScheduler> | undefined;

  beforeAll(async () => {
    ({ t, alice, bob, slow, quick } = await slowAndQuickOrgs());
  });
  afterAll(async () => {
    // A's receiver going away ends its attempt, so the scheduler stops at once.
    await slow?.close();
    await scheduler?.stop();
    await t?.close();
    await quick?.close();
  });

  it("org B's rule runs at its tick and notifies while org A's webhook is still waiting for its receiver", async () => {
    const start = t.clock.now().getTime() - (t.clock.now().getTime() % HOUR);
    t.clock.set(new Date(start));
    const kitA = await createDeliveryKit(alice, { tag: 'slow', receiver: slow });
    const kitB = await createDeliveryKit(bob, { tag: 'quick', receiver: quick });
    await writeCorpus(t, [channel('stall_a', [message(1, 'stall-a.com combolist', { date: start - HOUR })])]);
    // Both rules run once when created (spec 3.3.1): A's finds its message, B's nothing yet.
    await alice.created(messengerRule(kitA, 'A', 'stall-a.com'));
    const ruleB = await bob.created(messengerRule(kitB, 'B', 'stall-b.com'));
    scheduler = startScheduler(t.container, { pollMs: 50, log: () => undefined });
    await waitFor("A's receiver has the request", () => requestsTo(slow, kitA).length === 1);

    // B's message arrives; a day later B's rule is due and the scheduler's tick must run it.
    t.clock.set(new Date(start + HOUR));
    await writeCorpus(t, [channel('stall_b', [message(2, 'stall-b.com combolist', { date: start + HOUR })])]);
    t.clock.set(new Date(start + 24 * HOUR));
    await waitFor("B's rule has run at the tick", async () => (await runsOf(t, ruleB.id)).length === 2);
    await waitFor("B's receiver has the request", () => requestsTo(quick, kitB).length === 1);
    await bob.relogin();
    await alice.relogin();
    await waitFor(
      "B's attempt is recorded",
      async () => (await bob.delivery.attempts({ channel: 'webhook' })).count === 1,
    );
    expect((await bob.delivery.attempts({ channel: 'webhook' })).results).toMatchObject([
      { status: 'success', status_code: 204 },
    ]);
    // A's delivery is still open.
    expect((await alice.delivery.attempts({ channel: 'webhook' })).count).toBe(0);
    expect(requestsTo(slow, kitA)).toHaveLength(1);
  });
});
