import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel, message } from '../support/corpus.ts';
import {
  createDeliveryKit,
  createRulesApp,
  HOUR,
  messengerRule,
  requestsTo,
  rulesUser,
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

// Two containers in one process on the embedded store would share one thread through its
// synchronous driver: one container's open transaction would block the other's busy wait, a
// harness artefact. Separate processes are how the embedded store is shared (concurrency.test.ts
// runs real `rules tick` processes on both stores); PostgreSQL takes both.
describe.skipIf(testEngine === 'sqlite')(`rules: two containers on one store (${testEngine})`, () => {
  let location: TestStoreLocation;
  let t: TestApp;
  let t2: TestApp;
  let alice: RulesApi;
  let smtp: SmtpTestServer;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    [smtp, receiver] = await Promise.all([startSmtpTestServer({ auth: SMTP_AUTH }), startWebhookReceiver()]);
    location = await createTestStoreLocation();
    t = await createRulesApp({ location });
    t2 = await createRulesApp({ location, clock: t.clock });
    alice = await rulesUser(t, 'Acme', 'alice@acme.test');
  });
  afterAll(async () => {
    await t2?.close();
    await t?.close();
    await location?.drop();
    await Promise.all([smtp?.close(), receiver?.close()]);
  });

  it('ticking and dispatching concurrently from both sends one notification per match', async () => {
    const kit = await createDeliveryKit(alice, { tag: 'containers', receiver, smtp });
    const rule = await alice.created(messengerRule(kit, 'November', 'november-bank.com'));
    for (let round = 1; round <= 3; round++) {
      const at = new Date(T0 + round * DAY);
      await writeCorpus(t, [
        channel('november_leaks', [message(round, `november-bank.com part ${round}`, { date: at.getTime() - HOUR })]),
      ]);
      const reports = await Promise.all([
        t.container.runner.tick(at),
        t2.container.runner.tick(at),
        t2.container.runner.tick(at),
      ]);
      expect(reports.reduce((n, r) => n + r.ran, 0)).toBe(1);
      expect(reports.reduce((n, r) => n + r.matches, 0)).toBe(1);
      const dispatched = await Promise.all([
        t.container.notifier.dispatchPending(),
        t2.container.notifier.dispatchPending(),
        t.container.notifier.dispatchPending(),
      ]);
      expect(dispatched.reduce((n, d) => n + d, 0)).toBe(2);
      expect(requestsTo(receiver, kit)).toHaveLength(round);
      expect(smtp.messages.filter((m) => m.to.includes(kit.recipient.email))).toHaveLength(round);
      expect((await alice.matches(rule.id)).count).toBe(round);
    }
  });
});
