import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.ts';
import { spawnTick, tickSummary } from '../support/cli-process.ts';
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
  rulesEnv,
  rulesUser,
  SMTP_AUTH,
  writeCorpus,
  type RulesApi,
} from '../support/rules-api.ts';
import { startSmtpTestServer, type SmtpTestServer } from '../support/smtp-test-server.ts';
import type { TestApp } from '../support/test-app.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { scaled, waitFor } from '../support/wait.ts';

const CLI_TEST_MS = scaled(180_000);
const T0 = Date.parse('2026-03-10T09:00:00Z');
const DAY = 24 * HOUR;

/**
 * A real `dragnet rules tick` process killed with SIGKILL while it delivers, then run again on
 * the same store: the window is not evaluated twice and nothing already delivered is sent again.
 * The processes use the real clock for their claims (10 minutes for a notification).
 */
describe(`rules: a tick process killed mid-delivery and run again (${testEngine})`, () => {
  let location: TestStoreLocation;
  let t: TestApp;
  let alice: RulesApi;
  let receiver: WebhookReceiver;
  let cliEnv: Record<string, string>;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    location = await createTestStoreLocation();
    t = await createRulesApp({ location });
    alice = await rulesUser(t, 'Acme', 'alice@acme.test');
    // Long delivery timeouts: the killed process must still be waiting when it is killed.
    cliEnv = {
      ...location.env,
      ...(await rulesEnv({ DRAGNET_WEBHOOK_TIMEOUT_MS: '120000', DRAGNET_SMTP_TIMEOUT_MS: '120000' })),
    };
  });
  afterAll(async () => {
    await t?.close();
    await location?.drop();
    await receiver?.close();
  });

  it(
    'killed while its webhook request is in flight: the re-run sends no duplicate and records no second match',
    async () => {
      const hanging = await startWebhookReceiver('127.0.0.1', 'hang');
      try {
        const kit = await createDeliveryKit(alice, { tag: 'hang', receiver: hanging });
        const rule = await alice.created(messengerRule(kit, 'Sierra', 'sierra-bank.com', { recipients: [] }));
        await writeCorpus(t, [channel('sierra_leaks', [message(1, 'sierra-bank.com logs', { date: T0 + HOUR })])]);

        const doomed = spawnTick(new Date(T0 + DAY), cliEnv);
        await waitFor('the webhook request', () => hanging.requests.length > 0, {
          timeoutMs: scaled(120_000),
          everyMs: 10,
        });
        doomed.child.kill('SIGKILL');
        expect((await doomed.done).signal).toBe('SIGKILL');
        hanging.respond({ status: 204 });
        expect((await alice.matches(rule.id)).count).toBe(1);
        expect((await notificationsOf(t, rule.id)).map((n) => n.status)).toEqual(['sending']);

        const rerun = await tickSummary(spawnTick(new Date(T0 + DAY), cliEnv));
        expect(rerun).toMatchObject({ ran: 0, matches: 0, notifications_handled: 0 });
        expect(hanging.requests).toHaveLength(1);
        expect((await alice.matches(rule.id)).results).toEqual([
          expect.objectContaining({ total_hits: 1, window_end: iso(T0 + DAY) }),
        ]);
        expect((await alice.find(rule.id))!.last_run).toBe(iso(T0 + DAY));

        // The dead process's claim expires after 10 minutes. The request had reached the
        // receiver, so sending it again then would be a duplicate (spec 6.2: no retry).
        const later = await createRulesApp({ location, clock: createManualClock(new Date(Date.now() + 11 * 60_000)) });
        try {
          await deliverPending(later);
        } finally {
          await later.close();
        }
        expect(hanging.requests, 'webhook requests for one window').toHaveLength(1);
        expect((await notificationsOf(t, rule.id)).map((n) => n.status)).not.toContain('pending');
      } finally {
        await hanging.close();
      }
    },
    CLI_TEST_MS,
  );

  it(
    'killed while its email is in flight: the re-run sends the webhook once and never a second email',
    async () => {
      const gated: SmtpTestServer = await startSmtpTestServer({ auth: SMTP_AUTH, gated: true });
      try {
        const kit = await createDeliveryKit(alice, { tag: 'gated', smtp: gated, receiver });
        const rule = await alice.created(messengerRule(kit, 'Tango', 'tango-bank.com'));
        await writeCorpus(t, [channel('tango_leaks', [message(1, 'tango-bank.com logs', { date: T0 + HOUR })])]);

        // The email goes first and waits at MAIL FROM; the process is killed there.
        const doomed = spawnTick(new Date(T0 + DAY), cliEnv);
        await waitFor('MAIL FROM', () => gated.mailFromSecure.length > 0, { timeoutMs: scaled(120_000), everyMs: 10 });
        doomed.child.kill('SIGKILL');
        expect((await doomed.done).signal).toBe('SIGKILL');
        gated.release();
        expect(requestsTo(receiver, kit)).toHaveLength(0);
        expect((await notificationsOf(t, rule.id)).map((n) => [n.channel, n.status])).toEqual([
          ['email', 'sending'],
          ['webhook', 'pending'],
        ]);

        const rerun = await tickSummary(spawnTick(new Date(T0 + DAY), cliEnv));
        expect(rerun).toMatchObject({ ran: 0, matches: 0, notifications_handled: 1 });
        expect(requestsTo(receiver, kit)).toHaveLength(1);
        expect(gated.messages).toHaveLength(0);

        // Once the dead process's claim has expired, a dispatcher settles the email: at most one
        // message ever reaches the server (this one never got past MAIL FROM, so sending it then
        // is no duplicate; giving it up as failed, like an in-flight webhook, is allowed too).
        const later = await createRulesApp({ location, clock: createManualClock(new Date(Date.now() + 11 * 60_000)) });
        try {
          await deliverPending(later);
          await deliverPending(later);
        } finally {
          await later.close();
        }
        expect(gated.messages.length).toBeLessThanOrEqual(1);
        for (const mail of gated.messages) expect(mail.to).toEqual([kit.recipient.email]);
        expect(requestsTo(receiver, kit)).toHaveLength(1);
        expect((await alice.matches(rule.id)).count).toBe(1);
        const statuses = (await notificationsOf(t, rule.id)).map((n) => n.status);
        expect(statuses[1]).toBe('sent');
        expect(['sent', 'failed']).toContain(statuses[0]);
        expect(statuses[0] === 'sent').toBe(gated.messages.length === 1);
      } finally {
        await gated.close();
      }
    },
    CLI_TEST_MS,
  );
});
