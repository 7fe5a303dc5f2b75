import { setTimeout as sleep } from 'node:timers/promises';
import type { KyselyPlugin, QueryId } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createWorkerPresence } from '../../src/jobs/worker-presence.ts';
import { createNotifier } from '../../src/modules/rules/notifier.ts';
import { channel, message } from '../support/corpus.ts';
import {
  createDeliveryKit,
  createRulesApp,
  HOUR,
  messengerRule,
  requestsTo,
  rulesUser,
  slowAndQuickOrgs,
  writeCorpus,
  type RulesApi,
} from '../support/rules-api.ts';
import type { TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { waitFor } from '../support/wait.ts';

const AT = new Date(Date.parse('2026-03-11T09:00:00Z'));

/**
 * One organization's slow webhook must not hold up another's notification: org A's receiver
 * takes the request and never answers (within a 30 s delivery timeout); org B's notification,
 * queued after A's, must arrive while A's attempt is still open.
 */
describe(`notifications: a slow receiver delays only its own organization (${testEngine})`, () => {
  let t: TestApp;
  let alice: RulesApi;
  let bob: RulesApi;
  let slow: WebhookReceiver;
  let quick: WebhookReceiver;

  beforeAll(async () => {
    ({ t, alice, bob, slow, quick } = await slowAndQuickOrgs());
  });
  afterAll(async () => {
    await slow?.close();
    await t?.close();
    await quick?.close();
  });

  it("org B's webhook arrives while org A's is still waiting for its receiver", async () => {
    const kitA = await createDeliveryKit(alice, { tag: 'slow', receiver: slow });
    const kitB = await createDeliveryKit(bob, { tag: 'quick', receiver: quick });
    await alice.created(messengerRule(kitA, 'A', 'fairness-bank.com'));
    await bob.created(messengerRule(kitB, 'B', 'fairness-bank.com'));
    await writeCorpus(t, [
      channel('fairness_leaks', [message(1, 'fairness-bank.com combolist', { date: AT.getTime() - HOUR })]),
    ]);
    expect((await t.container.runner.tick(AT)).matches).toBe(2);
    // A's webhook notification is first in the outbox: a one-at-a-time dispatcher would send it first.
    const outbox = await t.container.store.db
      .selectFrom('notifications')
      .select(['id', 'org_id', 'channel'])
      .where('channel', '=', 'webhook')
      .orderBy('id')
      .execute();
    expect(outbox.map((n) => Number(n.org_id))).toEqual([alice.orgId, bob.orgId]);

    const dispatch = t.container.notifier.dispatchPending();
    await waitFor("A's receiver has the request", () => requestsTo(slow, kitA).length === 1);
    await waitFor("B's receiver has the request", () => requestsTo(quick, kitB).length === 1);
    // B's delivery completes (its attempt is recorded) while A's is still open.
    await waitFor(
      "B's attempt is recorded",
      async () => (await bob.delivery.attempts({ channel: 'webhook' })).count === 1,
    );
    expect((await bob.delivery.attempts({ channel: 'webhook' })).results).toMatchObject([
      { status: 'success', status_code: 204 },
    ]);
    expect((await alice.delivery.attempts({ channel: 'webhook' })).count).toBe(0);
    expect(requestsTo(slow, kitA)).toHaveLength(1);

    // A's receiver goes away: its attempt ends failed, and the dispatch with it.
    await slow.close();
    expect(await dispatch).toBe(4);
    expect((await alice.delivery.attempts({ channel: 'webhook' })).results).toMatchObject([
      { status: 'failed', status_code: null },
    ]);
  });
});

/**
 * A claim that comes back empty because the only pending notifications belonged to an
 * organization whose delivery was still running must not end the dispatch when that delivery
 * ended meanwhile: the organization's next notification is claimable by then. (A dispatch once
 * ended with an email failed and its webhook left pending, on a machine where the email's
 * instant failure beat the claim's query.) The claims are made slower than a delivery, so the
 * order is certain. PostgreSQL only: there the claim and a delivery's queries run on connections
 * of their own; SQLite's one writer connection runs them in the order they were sent, and the
 * claim, sent first, holds it through its delay.
 */
describe.skipIf(testEngine !== 'postgres')(
  "notifications: one dispatch sends an organization's notifications one after the other (postgres)",
  () => {
    let t: TestApp | undefined;
    let receiver: WebhookReceiver | undefined;

    afterEach(async () => {
      await t?.close();
      await receiver?.close();
    });

    it('sends the webhook after the email whose failure ended while the next claim was being made', async () => {
      receiver = await startWebhookReceiver();
      t = await createRulesApp();
      const alice = await rulesUser(t, 'Acme', 'alice@acme.test');
      // No sender: the email fails at once, without a network round trip.
      const kit = await createDeliveryKit(alice, { tag: 'acme', receiver });
      await alice.created(messengerRule(kit, 'A', 'claim-race-bank.com'));
      await writeCorpus(t, [
        channel('claim_race', [message(1, 'claim-race-bank.com combolist', { date: AT.getTime() - HOUR })]),
      ]);
      expect((await t.container.runner.tick(AT)).matches).toBe(1);

      const claims = new Set<QueryId>();
      const slowClaims: KyselyPlugin = {
        transformQuery({ node, queryId }) {
          // The claim is the only update of the outbox that returns its rows.
          if (node.kind === 'UpdateQueryNode' && node.returning) claims.add(queryId);
          return node;
        },
        async transformResult({ queryId, result }) {
          if (claims.delete(queryId)) await sleep(300);
          return result;
        },
      };
      const db = t.container.store.db.withPlugin(slowClaims);
      const presence = createWorkerPresence({ db, clock: t.clock, heartbeatMs: 1000 });
      const notifier = createNotifier({
        db,
        engine: t.container.store.engine,
        clock: t.clock,
        presence,
        delivery: t.container.delivery,
        organizations: t.container.organizations,
        log: () => {},
      });
      try {
        expect(await notifier.dispatchPending()).toBe(2);
      } finally {
        await presence.close();
      }
      const outbox = await t.container.store.db
        .selectFrom('notifications')
        .select(['channel', 'status'])
        .orderBy('id')
        .execute();
      expect(outbox).toEqual([
        { channel: 'email', status: 'failed' },
        { channel: 'webhook', status: 'sent' },
      ]);
      expect(requestsTo(receiver, kit)).toHaveLength(1);
    });
  },
);
