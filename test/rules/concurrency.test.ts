import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnTick, type TickSummary } from '../support/cli-process.ts';
import { channel, message } from '../support/corpus.ts';
import {
  createDeliveryKit,
  createRulesApp,
  HOUR,
  iso,
  messengerRule,
  notificationsOf,
  payloadOf,
  requestsTo,
  rulesEnv,
  rulesUser,
  runsOf,
  SMTP_AUTH,
  writeCorpus,
  type DeliveryKit,
  type RulesApi,
  type RuleView,
} from '../support/rules-api.ts';
import { startSmtpTestServer, type SmtpTestServer } from '../support/smtp-test-server.ts';
import type { TestApp } from '../support/test-app.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { scaled } from '../support/wait.ts';

// Each `dragnet` process starts in under a second (bin/dragnet.js on dist/), seconds on a loaded
// machine.
const CLI_TEST_MS = scaled(150_000);
const T0 = Date.parse('2026-03-10T09:00:00Z');
const DAY = 24 * HOUR;
/** Rules beside the three watched ones (fewer on PostgreSQL, where each create costs more). */
const CROWD = testEngine === 'sqlite' ? 100 : 60;

describe(`rules: concurrent evaluation on one store (${testEngine})`, () => {
  let location: TestStoreLocation;
  let t: TestApp;
  let alice: RulesApi;
  let smtp: SmtpTestServer;
  let receiver: WebhookReceiver;
  let cliEnv: Record<string, string>;

  beforeAll(async () => {
    [smtp, receiver] = await Promise.all([startSmtpTestServer({ auth: SMTP_AUTH }), startWebhookReceiver()]);
    location = await createTestStoreLocation();
    t = await createRulesApp({ location });
    alice = await rulesUser(t, 'Acme', 'alice@acme.test');
    cliEnv = { ...location.env, ...(await rulesEnv()) };
  });
  afterAll(async () => {
    await t?.close();
    await location?.drop();
    await Promise.all([smtp?.close(), receiver?.close()]);
  });

  const sum = (summaries: TickSummary[], key: keyof Omit<TickSummary, 'at'>) =>
    summaries.reduce((n, s) => n + s[key], 0);
  const mailTo = (kit: DeliveryKit) => smtp.messages.filter((m) => m.to.includes(kit.recipient.email));

  /**
   * Starts `count` tick processes at once and waits for all. Each must exit 0 (a soft check, so
   * the store's state is still examined when one fails); returns the summaries of those that did.
   */
  async function concurrentTicks(count: number, at: Date): Promise<TickSummary[]> {
    const results = await Promise.all(Array.from({ length: count }, () => spawnTick(at, cliEnv).done));
    for (const result of results) expect.soft(result.code, `rules tick failed: ${result.stderr}`).toBe(0);
    return results.filter((result) => result.code === 0).map((result) => JSON.parse(result.stdout) as TickSummary);
  }

  it(
    'three `rules tick` processes at the same time (twice): each window runs once, each notification is sent once',
    async () => {
      const kits: DeliveryKit[] = [];
      const rules: RuleView[] = [];
      for (const [i, query] of ['mike-bank.com', 'mike-bank.com AND dump', 'mike'].entries()) {
        const kit = await createDeliveryKit(alice, { tag: `cli${i}`, receiver, smtp: i === 0 ? smtp : undefined });
        kits.push(kit);
        rules.push(await alice.created(messengerRule(kit, `Mike ${i}`, query, i === 0 ? {} : { recipients: [] })));
      }
      for (const rule of rules) expect(rule).toMatchObject({ last_run: iso(T0), total_matches_count: 0 });
      // Many more rules on one shared webhook make each tick long enough for the processes'
      // evaluations (claims, matches, dispatches) to interleave rather than run one after the other.
      await t.container.organizations.update('Acme', { alertRuleLimit: 1000 });
      const crowdKit = await createDeliveryKit(alice, { tag: 'crowd', receiver });
      const crowd: RuleView[] = [];
      for (let i = 0; i < CROWD; i++)
        crowd.push(
          await alice.created(messengerRule(crowdKit, `Crowd ${i}`, `mike-bank.com OR crowd${i}`, { recipients: [] })),
        );

      await writeCorpus(t, [channel('mike_leaks', [message(1, 'mike-bank.com dump for sale', { date: T0 + HOUR })])]);
      const first = await concurrentTicks(3, new Date(T0 + DAY));
      for (const [i, rule] of rules.entries()) {
        const matches = (await alice.matches(rule.id)).results;
        expect(matches, rule.name).toEqual([
          expect.objectContaining({ total_hits: 1, window_start: iso(T0), window_end: iso(T0 + DAY) }),
        ]);
        expect((await runsOf(t, rule.id)).map((run) => run.window_end)).toEqual([T0, T0 + DAY]);
        expect(requestsTo(receiver, kits[i]!), rule.name).toHaveLength(1);
        expect((await notificationsOf(t, rule.id)).every((row) => row.status === 'sent')).toBe(true);
        expect((await alice.find(rule.id))!.last_run).toBe(iso(T0 + DAY));
      }
      expect(mailTo(kits[0]!)).toHaveLength(1);
      for (const rule of crowd)
        expect(
          (await runsOf(t, rule.id)).map((run) => [run.window_end, run.status]),
          rule.name,
        ).toEqual([
          [T0, 'empty'],
          [T0 + DAY, 'completed'],
        ]);
      const crowdNames = requestsTo(receiver, crowdKit).map((r) => payloadOf(r).alert_rule_name);
      expect(crowdNames).toHaveLength(CROWD);
      expect(new Set(crowdNames).size).toBe(CROWD);
      expect(sum(first, 'ran')).toBe(3 + CROWD);
      // Each due rule was claimed by one process: none read every rule.
      expect(sum(first, 'due')).toBe(3 + CROWD);
      expect(sum(first, 'matches')).toBe(3 + CROWD);
      // One webhook per rule and one email, whichever process sent them.
      expect(sum(first, 'notifications_handled')).toBe(4 + CROWD);

      await writeCorpus(t, [
        channel('mike_leaks', [message(2, 'mike-bank.com dump, part two', { date: T0 + DAY + HOUR })]),
      ]);
      const at = new Date(T0 + 2 * DAY);
      const second = await concurrentTicks(3, at);
      for (const [i, rule] of rules.entries()) {
        expect((await alice.matches(rule.id)).count, rule.name).toBe(2);
        const requests = requestsTo(receiver, kits[i]!);
        expect(requests, rule.name).toHaveLength(2);
        expect(payloadOf(requests[1]!)).toMatchObject({ alert_rule_name: rule.name, total_matches: 1 });
      }
      expect(mailTo(kits[0]!)).toHaveLength(2);
      // Every crowd rule's second window was evaluated (and notified) exactly once.
      for (const rule of crowd)
        expect(
          (await runsOf(t, rule.id)).map((run) => [run.window_end, run.status]),
          rule.name,
        ).toEqual([
          [T0, 'empty'],
          [T0 + DAY, 'completed'],
          [T0 + 2 * DAY, 'completed'],
        ]);
      expect(requestsTo(receiver, crowdKit)).toHaveLength(2 * CROWD);
      expect(sum(second, 'ran')).toBe(3 + CROWD);
      expect(sum(second, 'due')).toBe(3 + CROWD);
      expect(sum(second, 'notifications_handled')).toBe(4 + CROWD);
    },
    CLI_TEST_MS,
  );
});
