import { request as httpRequest } from 'node:http';
import autocannon from 'autocannon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.ts';
import {
  createDeliveryKit,
  createRulesApp,
  HOUR,
  messengerRule,
  rulesEnv,
  rulesUser,
  SMTP_AUTH,
  type DeliveryKit,
  type RulesApi,
} from '../support/rules-api.ts';
import { createOrgWithRandomId, deleteRedisCounters, REDIS_URL } from '../support/rate-limits.ts';
import { startServer, startWorker, type ServerProcess, type WorkerProcess } from '../support/server-process.ts';
import { startSmtpTestServer, type SmtpTestServer } from '../support/smtp-test-server.ts';
import { DEFAULT_PASSWORD, type TestApp } from '../support/test-app.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { scaled, waitFor } from '../support/wait.ts';

const SLOW_MS = scaled(150_000);
const DAY = 24 * HOUR;
/** PostgreSQL + Redis: two API and two worker processes; the embedded store: one of each. */
const TOPOLOGY = testEngine === 'postgres' ? { api: 2, workers: 2 } : { api: 1, workers: 1 };
const MESSAGES = 12_000;
/** Enough rules that recording the tick's results takes a while: the kill lands in the middle. */
const RULES = 60;
/** Message j names rule (j % RULES)'s domain: MESSAGES / RULES hits a rule. */
const HITS_PER_RULE = MESSAGES / RULES;
/** Each webhook is answered after this long, so a dispatch can be caught half-way. */
const WEBHOOK_DELAY_MS = 50;

const domainOf = (rule: number) => `zeta${rule}-corp.com`;

/**
 * The workers run on the real clock, so the window the test expects is the current hour's. Set
 * up this close to the next hour, a worker started after it turns evaluates the next window;
 * the test waits for that hour instead.
 */
const HOUR_ROOM_MS = scaled(90_000);

async function untilTheHourHasRoom(): Promise<number> {
  const left = HOUR - (Date.now() % HOUR);
  if (left < HOUR_ROOM_MS) await new Promise((resolve) => setTimeout(resolve, left + 1_000));
  return Date.now();
}

/**
 * Dragnet deployed as several processes on one store, each kind SIGKILLed in the middle of its
 * work and started again: an API process during a large ingest, a worker during the rule tick,
 * a worker during notification dispatch. Real SMTP and webhook receivers count deliveries.
 * Afterwards nothing is lost (every message once, every rule's window matched once with all its
 * hits) and nothing is sent twice (a notification in flight when its worker died may have
 * arrived, so it is marked failed, not sent again: spec 6.2 has no retry). Then the account cap
 * of 25 requests a second holds exactly across the API processes.
 *
 * API processes run `dragnet serve --no-worker` and workers `dragnet worker`, started once the
 * corpus and the rules exist so that the tick happens at a known moment. Rules are created by
 * an in-process app whose clock is two days back, so they are due for the workers' window at
 * once and their window holds the whole corpus.
 */
describe(`faults: ${TOPOLOGY.api} API and ${TOPOLOGY.workers} worker processes killed mid-work (${testEngine}${testEngine === 'postgres' ? ' + Redis' : ''})`, () => {
  let location: TestStoreLocation;
  let env: Record<string, string>;
  let t: TestApp;
  let alice: RulesApi;
  let kit: DeliveryKit;
  let smtp: SmtpTestServer;
  let receiver: WebhookReceiver;
  const api: ServerProcess[] = [];
  const workers: WorkerProcess[] = [];
  const redisOrgs: number[] = [];
  /** Set in beforeAll, once the hour has room for the whole test (HOUR_ROOM_MS). */
  let now: number;
  let windowEnd: number;

  const children = () => [...api, ...workers];
  const kill = async (process: ServerProcess | WorkerProcess) => {
    process.child.kill('SIGKILL');
    expect((await process.exited).signal).toBe('SIGKILL');
  };
  /** The child running as `pid`: the worker a claim in the store names. */
  const workerWithPid = (pid: number) => {
    const found = workers.find((w) => w.child.pid === pid);
    if (!found) throw new Error(`pid ${pid} is not one of this test's workers`);
    return found;
  };
  const claimantPid = async (workerId: string | null) =>
    Number(
      (
        await t.container.store.db
          .selectFrom('workers')
          .select('pid')
          .where('id', '=', workerId!)
          .executeTakeFirstOrThrow()
      ).pid,
    );

  // Often: the states looked for (a claim, a notification being sent) last a few milliseconds.
  const closely = { timeoutMs: scaled(60_000), everyMs: 5 };

  async function login(server: ServerProcess, email: string): Promise<string> {
    const response = await fetch(`${server.baseUrl}/token/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: DEFAULT_PASSWORD }),
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { access: string }).access;
  }

  beforeAll(async () => {
    now = await untilTheHourHasRoom();
    windowEnd = now - (now % HOUR);
    [smtp, receiver] = await Promise.all([startSmtpTestServer({ auth: SMTP_AUTH }), startWebhookReceiver()]);
    receiver.respond({ status: 204, delayMs: WEBHOOK_DELAY_MS });
    location = await createTestStoreLocation();
    const { DRAGNET_RATE_LIMITS: _off, ...delivery } = await rulesEnv();
    env = {
      ...location.env,
      ...delivery,
      HOST: '127.0.0.1',
      PORT: '0',
      // A killed worker is taken for dead after six missed heartbeats: 1.2 s.
      DRAGNET_WORKER_HEARTBEAT_MS: '200',
      DRAGNET_SCHEDULER_POLL_MS: '100',
      ...(testEngine === 'postgres' ? { DRAGNET_REDIS_URL: REDIS_URL } : {}),
    };
    t = await createRulesApp({ location, clock: createManualClock(new Date(now - 2 * DAY)) });
    alice = await rulesUser(t, 'Acme', 'alice@acme.test');
    await t.container.organizations.update('Acme', { alertRuleLimit: 100 });
    await t.createUser({ org: 'Feeds', email: 'feeder@feeds.test', role: 'system' });
    kit = await createDeliveryKit(alice, { tag: 'fault', smtp, receiver });
    for (let i = 0; i < TOPOLOGY.api; i++) api.push(await startServer(env, scaled(120_000), ['--no-worker']));
  }, SLOW_MS + HOUR_ROOM_MS);

  afterAll(async () => {
    for (const child of children()) {
      if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGKILL');
      await child.exited;
    }
    await t?.close();
    await location?.drop();
    if (redisOrgs.length) await deleteRedisCounters(redisOrgs);
    await Promise.all([smtp?.close(), receiver?.close()]);
  });

  /** The corpus as JSON Lines: 20 channels, messages dated inside the rules' coming window. */
  function corpus(): Buffer {
    const lines: string[] = [];
    const first = now - 2 * DAY + HOUR;
    for (let j = 0; j < MESSAGES; j++) {
      const text = `faultmarker message ${j} credentials for ${domainOf(j % RULES)}`;
      const date = new Date(first + Math.floor(((windowEnd - HOUR - first) * j) / MESSAGES)).toISOString();
      lines.push(
        JSON.stringify({
          channel: { platform: 'telegram', username: `fault_channel_${j % 20}`, title: `Fault ${j % 20}` },
          message_id: j,
          date,
          text,
        }),
      );
    }
    return Buffer.from(lines.join('\n') + '\n');
  }

  /** POST /ingest/messenger/; `onSent` runs once the whole body is on the wire. */
  function ingest(server: ServerProcess, token: string, body: Buffer, onSent?: () => void) {
    return new Promise<{ status: number; body: Record<string, number> }>((resolve, reject) => {
      const url = new URL('/ingest/messenger/?format=jsonl', server.baseUrl);
      const request = httpRequest(
        url,
        {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/x-ndjson',
            'content-length': body.length,
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({
              status: response.statusCode!,
              body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, number>,
            }),
          );
          response.on('error', reject);
        },
      );
      request.on('error', reject);
      request.end(body, onSent);
    });
  }

  const storedMessages = async () =>
    Number(
      (
        await t.container.store.db
          .selectFrom('messages')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it(
    '(a) an API process killed during a large ingest: nothing half-written, and the same body sent again stores every message once',
    async () => {
      const body = corpus();
      const token = await login(api[0]!, 'feeder@feeds.test');
      const interrupted = ingest(api[0]!, token, body, () => void kill(api[0]!));
      await expect(interrupted).rejects.toThrow();
      expect(await storedMessages()).toBe(0);

      api[0] = await startServer(env, scaled(120_000), ['--no-worker']);
      const again = await ingest(api[0], await login(api[0], 'feeder@feeds.test'), body);
      expect(again).toMatchObject({ status: 200, body: { records: MESSAGES, accepted: MESSAGES, duplicates: 0 } });
      // On another API process where there is one: re-sent data adds nothing.
      const target = api[api.length - 1]!;
      const third = await ingest(target, await login(target, 'feeder@feeds.test'), body);
      expect(third).toMatchObject({ status: 200, body: { accepted: 0, duplicates: MESSAGES } });
      expect(await storedMessages()).toBe(MESSAGES);
    },
    SLOW_MS,
  );

  it(
    '(b, c) a worker killed mid-tick and one killed mid-dispatch: every window matched once with all its hits, no notification sent twice',
    async () => {
      const rules = [];
      for (let i = 0; i < RULES; i++) rules.push(await alice.created(messengerRule(kit, `Fault ${i}`, domainOf(i))));
      const db = t.container.store.db;
      const ruleIds = rules.map((rule) => rule.id);
      const runsOfWindow = () =>
        db
          .selectFrom('rule_runs')
          .selectAll()
          .where('rule_id', 'in', ruleIds)
          .where('window_end', '=', windowEnd)
          .execute();

      for (let i = 0; i < TOPOLOGY.workers; i++) workers.push(await startWorker(env, scaled(120_000)));
      // (b) Whichever worker claimed the window's runs dies before it has recorded them all.
      const running = await waitFor(
        'the tick to claim the runs',
        async () => {
          const runs = await runsOfWindow();
          const open = runs.filter((run) => run.status === 'running');
          return runs.length === RULES && open.length > 0 && open;
        },
        closely,
      );
      const tickWorker = workerWithPid(await claimantPid(running[0]!.claimed_by));
      await kill(tickWorker);
      workers[workers.indexOf(tickWorker)] = await startWorker(env, scaled(120_000));

      // (c) Then whichever worker is sending a notification once a few have arrived. The worker
      // killed mid-tick may have left one 'sending' until it is taken for dead: not that one.
      await waitFor('a few webhook deliveries', async () => receiver.requests.length >= 3, closely);
      const dispatcher = await waitFor(
        'a webhook being sent by a running worker',
        async () => {
          const senders = await db
            .selectFrom('notifications')
            .innerJoin('workers', 'workers.id', 'notifications.claimed_by')
            .select('workers.pid')
            .where('notifications.rule_id', 'in', ruleIds)
            .where('notifications.channel', '=', 'webhook')
            .where('notifications.status', '=', 'sending')
            .execute();
          return workers.find((worker) => senders.some((sender) => Number(sender.pid) === worker.child.pid));
        },
        closely,
      );
      await kill(dispatcher);
      workers[workers.indexOf(dispatcher)] = await startWorker(env, scaled(120_000));

      const notifications = await waitFor(
        'every notification to be settled',
        async () => {
          const rows = await db.selectFrom('notifications').selectAll().where('rule_id', 'in', ruleIds).execute();
          return (
            rows.length === 2 * RULES && rows.every((row) => row.status === 'sent' || row.status === 'failed') && rows
          );
        },
        { timeoutMs: scaled(90_000), everyMs: 50 },
      );

      // No lost match: each rule's window once, with every hit of the corpus.
      for (const rule of rules) {
        const matches = (await alice.matches(rule.id)).results.filter((m) => Date.parse(m.window_end) === windowEnd);
        expect(matches, rule.name).toEqual([expect.objectContaining({ total_hits: HITS_PER_RULE })]);
      }
      expect((await runsOfWindow()).map((run) => run.status)).toEqual(Array<string>(RULES).fill('completed'));

      // No notification twice. One in flight when its worker died is failed (it may have
      // arrived); every other one was delivered exactly once.
      const webhooksByRule = new Map<string, number>();
      for (const request of receiver.requests) {
        const name = (JSON.parse(request.body.toString('utf8')) as { alert_rule_name: string }).alert_rule_name;
        webhooksByRule.set(name, (webhooksByRule.get(name) ?? 0) + 1);
      }
      const mailsByRule = new Map<string, number>();
      for (const mail of smtp.messages) {
        // The kit's template: "Alert {alert_rule_name} (template fault)".
        const name = /^Alert (.+) \(template fault\)$/.exec(mail.parsed.subject ?? '')?.[1];
        if (name) mailsByRule.set(name, (mailsByRule.get(name) ?? 0) + 1);
      }
      // At most the one in flight of each killed worker: dispatch runs beside the tick, so the
      // worker killed mid-tick may have had one of the organization's notifications in flight too.
      const failed = notifications.filter((n) => n.status === 'failed');
      expect(failed.length).toBeLessThanOrEqual(2);
      for (const notification of notifications) {
        const rule = rules.find((r) => r.id === Number(notification.rule_id))!;
        const deliveries = (notification.channel === 'webhook' ? webhooksByRule : mailsByRule).get(rule.name) ?? 0;
        if (notification.status === 'sent') expect(deliveries, `${notification.channel} of ${rule.name}`).toBe(1);
        else expect(deliveries, `${notification.channel} of ${rule.name}`).toBeLessThanOrEqual(1);
      }
    },
    SLOW_MS,
  );

  it(
    `the account cap of 25 requests a second holds exactly over ${TOPOLOGY.api} API process(es) under a burst of 100`,
    async () => {
      const orgId = await createOrgWithRandomId(t.container, 'Capped');
      redisOrgs.push(orgId);
      await t.createUser({ org: 'Capped', email: 'burst@capped.test' });
      const targets = await Promise.all(
        api.map(async (server) => ({
          url: `${server.baseUrl}/service/account/`,
          token: await login(server, 'burst@capped.test'),
        })),
      );

      /** 100 requests spread over the API processes, all sent and answered within one calendar second. */
      async function burst(): Promise<number[]> {
        for (let attempt = 1; ; attempt++) {
          if (attempt > 20) throw new Error('no burst of 100 requests finished within one calendar second in 20 tries');
          // Start just after a second turns, so the burst has the whole second to finish.
          await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 20));
          const second = Math.floor(Date.now() / 1000);
          const statuses: number[] = [];
          let last = 0;
          await Promise.all(
            targets.map(
              (target) =>
                new Promise<void>((resolve, reject) => {
                  const instance = autocannon(
                    {
                      url: target.url,
                      headers: { authorization: `Bearer ${target.token}` },
                      connections: 25,
                      amount: 100 / targets.length,
                    },
                    (error: unknown) =>
                      error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(),
                  );
                  instance.on('response', (_client: unknown, status: number) => {
                    statuses.push(status);
                    last = Date.now();
                  });
                }),
            ),
          );
          // A burst that ran into the next second proves nothing: try again in a quieter one.
          if (Math.floor(last / 1000) === second && statuses.length === 100) return statuses;
        }
      }

      for (let round = 0; round < 2; round++) {
        const statuses = await burst();
        expect(statuses.filter((s) => s === 200)).toHaveLength(25);
        expect(statuses.filter((s) => s === 429)).toHaveLength(75);
      }
    },
    SLOW_MS,
  );
});
