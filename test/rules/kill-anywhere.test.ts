import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.ts';
import { spawnTick, tickSummary } from '../support/cli-process.ts';
import { channel, message } from '../support/corpus.ts';
import {
  createDeliveryKit,
  createRulesApp,
  HOUR,
  messengerRule,
  notificationsOf,
  requestsTo,
  rulesEnv,
  rulesUser,
  SMTP_AUTH,
  tickAndDeliver,
  writeCorpus,
  type HitView,
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
 * A real `rules tick` process SIGKILLed as soon as its run of the rule shows in the store (plus a
 * random few milliseconds): somewhere between claiming the window and delivering. The email
 * server holds every MAIL FROM until the process is dead, so no delivery can have completed
 * before the kill. Whatever point it died at, after a re-run of the same tick, the next hour's
 * tick and a dispatcher running past the dead process's claims, the hit is in exactly one match,
 * the webhook arrived once (the email goes first, so the webhook was never in flight) and the
 * email at most once (once, unless it was in flight when the process died).
 */
describe(`rules: a tick process killed at an arbitrary point (${testEngine})`, () => {
  let location: TestStoreLocation;
  let t: TestApp;
  let alice: RulesApi;
  let receiver: WebhookReceiver;
  let smtp: SmtpTestServer;
  let cliEnv: Record<string, string>;

  beforeAll(async () => {
    [smtp, receiver] = await Promise.all([
      startSmtpTestServer({ auth: SMTP_AUTH, gated: true }),
      startWebhookReceiver(),
    ]);
    location = await createTestStoreLocation();
    t = await createRulesApp({ location });
    alice = await rulesUser(t, 'Acme', 'alice@acme.test');
    cliEnv = { ...location.env, ...(await rulesEnv({ DRAGNET_SMTP_TIMEOUT_MS: '120000' })) };
  });
  afterAll(async () => {
    await t?.close();
    await location?.drop();
    await Promise.all([smtp?.close(), receiver?.close()]);
  });

  it(
    'exactly one match and one delivery per channel for the window',
    async () => {
      const kit = await createDeliveryKit(alice, { tag: 'anywhere', receiver, smtp });
      const rule = await alice.created(messengerRule(kit, 'Uniform', 'uniform-bank.com'));
      await writeCorpus(t, [
        channel('uniform_leaks', [message(1, 'uniform-bank.com stealer logs', { date: T0 + HOUR })]),
      ]);
      const until = T0 + DAY;
      const db = t.container.store.db;

      const doomed = spawnTick(new Date(until), cliEnv);
      const extraMs = Math.floor(Math.random() * 40);
      await waitFor(
        'the run to be claimed',
        async () =>
          !!(await db
            .selectFrom('rule_runs')
            .select('id')
            .where('rule_id', '=', rule.id)
            .where('window_end', '=', until)
            .executeTakeFirst()),
        { timeoutMs: scaled(120_000), everyMs: 2 },
      );
      await new Promise((resolve) => setTimeout(resolve, extraMs));
      doomed.child.kill('SIGKILL');
      const killed = await doomed.done;
      smtp.release();
      const context = `killed ${extraMs} ms after the claim showed (exit ${killed.code ?? killed.signal})`;

      // Restart: the same tick again, then the next hour's tick, with the real clock.
      await tickSummary(spawnTick(new Date(until), cliEnv));
      await tickSummary(spawnTick(new Date(until + HOUR), cliEnv));
      // A dispatcher once every claim of the dead process has expired (10 minutes).
      const later = await createRulesApp({ location, clock: createManualClock(new Date(Date.now() + 11 * 60_000)) });
      try {
        await tickAndDeliver(later, new Date(until + HOUR));
      } finally {
        await later.close();
      }

      const matches = (await alice.matches(rule.id)).results;
      const hits: HitView[] = [];
      for (const match of matches) hits.push(...(await alice.hits(match.id)).results);
      expect(
        hits.map((h) => h.message_id),
        context,
      ).toEqual([1]);
      expect(matches, context).toHaveLength(1);
      expect(requestsTo(receiver, kit), context).toHaveLength(1);
      // An email the dead process had in flight may be given up rather than risk a duplicate;
      // either way no second one is sent, and one that is marked sent arrived.
      const mails = smtp.messages.filter((m) => m.to.includes(kit.recipient.email));
      expect(mails.length, context).toBeLessThanOrEqual(1);
      const email = (await notificationsOf(t, rule.id)).find((n) => n.channel === 'email')!;
      expect(['sent', 'failed'], context).toContain(email.status);
      expect(mails.length, context).toBe(email.status === 'sent' ? 1 : 0);
    },
    CLI_TEST_MS,
  );
});
