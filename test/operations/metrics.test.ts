import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT_SCOPE } from '../../src/modules/usage/index.ts';
import { spawnCli } from '../support/cli-process.ts';
import { expectError } from '../support/http.ts';
import { createDeliveryKit, rulesApi, rulesEnv, sourceRule } from '../support/rules-api.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { createTestStoreLocation, testEngine } from '../support/test-store.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { scaled, waitFor } from '../support/wait.ts';

/**
 * /metrics, /readyz and /healthz (docs/operations.md "Metrics and health") on a real store: who
 * may read the metrics, and that each family counts what happened, in the API and in a worker.
 */

const METRICS_TOKEN = 'scrape-token-0123456789abcdef';
const TERM = 'quarzlink-5521';

/** The value of one sample (`name{labels} value`), or undefined when the series is absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const braces = /^[^{ ]+(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!braces) continue;
    const found = Object.fromEntries([...(braces[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) return Number(braces[2]);
  }
  return undefined;
}

const messageLine = (messageId: number, date: string) =>
  JSON.stringify({
    channel: { id: 7007, username: '@metrics_channel', title: 'Metrics Channel' },
    message_id: messageId,
    date,
    text: `dump ${TERM} #${messageId}`,
  });

describe(`metrics and readiness in the API (${testEngine})`, () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  const scrape = async (options: { remoteAddress?: string; headers?: Record<string, string> } = {}) =>
    t.app.inject({ method: 'GET', url: '/metrics', remoteAddress: options.remoteAddress, headers: options.headers });
  const metrics = async () => {
    const response = await scrape();
    expect(response.statusCode, response.body).toBe(200);
    return response.body;
  };

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    t = await createTestApp({
      env: { ...(await rulesEnv()), DRAGNET_RATE_LIMITS: 'on', DRAGNET_LOGIN_MAX_FAILURES_PER_ACCOUNT: '2' },
    });
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it('serves the Prometheus text format to a loopback client, and nothing to a forwarded or remote one', async () => {
    const response = await scrape();
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(sample(response.body, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(sample(response.body, 'dragnet_queue_depth', { queue: 'jobs', status: 'queued' })).toBe(0);

    // A proxy on the same host connects from loopback too; its forwarding header gives it away.
    expectError(await scrape({ headers: { 'x-forwarded-for': '203.0.113.9' } }), 403, 'forbidden');
    expectError(await scrape({ remoteAddress: '203.0.113.9' }), 403, 'forbidden');
  });

  it('labels requests by route pattern and status, never by raw URL', async () => {
    await t.createUser({ org: 'Metrics Org', email: 'm@metrics.example' });
    const { access } = await t.login('m@metrics.example');
    expectError(
      await t.request({ method: 'GET', url: '/service/alert_system_match_get_match/424242/', token: access }),
      404,
    );
    expectError(await t.request({ method: 'GET', url: '/service/no_such_thing/777/' }), 404);
    const text = await metrics();
    const route = { method: 'GET', route: '/service/alert_system_match_get_match/:id/', status_code: '404' };
    expect(sample(text, 'dragnet_http_request_duration_seconds_count', route)).toBe(1);
    expect(sample(text, 'dragnet_http_request_duration_seconds_bucket', { ...route, le: '+Inf' })).toBe(1);
    expect(
      sample(text, 'dragnet_http_request_duration_seconds_count', {
        method: 'POST',
        route: '/token/',
        status_code: '200',
      }),
    ).toBe(1);
    expect(
      sample(text, 'dragnet_http_request_duration_seconds_count', { route: 'unmatched', status_code: '404' }),
    ).toBe(1);
    expect(text).not.toContain('424242');
    expect(text).not.toContain('no_such_thing');
  });

  it('counts rate-limit refusals and login throttling by route', async () => {
    const user = await t.createUser({ org: 'Limited Org', email: 'l@limited.example' });
    const { access } = await t.login('l@limited.example');
    await t.container.limits.setOverride(user.org_id, ACCOUNT_SCOPE, 'second', 1);
    // The manual clock stands still: both requests fall in one second.
    expect((await t.request({ method: 'GET', url: '/service/account/', token: access })).statusCode).toBe(200);
    expectError(await t.request({ method: 'GET', url: '/service/account/', token: access }), 429, 'rate_limited');
    for (let i = 0; i < 3; i++)
      await t.request({
        method: 'POST',
        url: '/token/',
        body: { email: 'l@limited.example', password: 'wrong password here' },
      });
    const text = await metrics();
    expect(
      sample(text, 'dragnet_rate_limit_refusals_total', { route: '/service/account/', code: 'rate_limited' }),
    ).toBe(1);
    expect(
      sample(text, 'dragnet_rate_limit_refusals_total', { route: '/token/', code: 'too_many_attempts' }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('counts records ingested through the API by source and outcome, and deliveries by channel and outcome', async () => {
    await t.createUser({ org: 'Operators', email: 'ops@operators.example', role: 'system' });
    const operator = await t.login('ops@operators.example');
    const ingest = () =>
      t.request({
        method: 'POST',
        url: '/ingest/messenger/',
        token: operator.access,
        headers: { 'content-type': 'application/x-ndjson' },
        body: [messageLine(1, '2026-02-01T10:00:00Z'), messageLine(2, '2026-02-02T10:00:00Z')].join('\n') + '\n',
      });
    expect((await ingest()).json()).toMatchObject({ accepted: 2 });
    expect((await ingest()).json()).toMatchObject({ duplicates: 2 });

    const user = await t.createUser({ org: 'Hooked Org', email: 'h@hooked.example' });
    const api = rulesApi(t, (await t.login('h@hooked.example')).access, user.org_id, user.id);
    const kit = await createDeliveryKit(api, { tag: 'metrics', receiver });
    expect((await api.delivery.testWebhook(kit.webhook!.id)).json()).toMatchObject({ status: 'success' });
    receiver.respond({ status: 500 });
    expect((await api.delivery.testWebhook(kit.webhook!.id)).json()).toMatchObject({ status: 'failed' });
    receiver.respond({ status: 204 });

    // The rule's first run matches both messages; its notification waits in the outbox (no
    // dispatcher runs in this app), which the queue depth shows.
    await api.created(sourceRule(kit, 'metrics rule', 1, { query: TERM }, { recipients: [] }));

    const text = await metrics();
    expect(sample(text, 'dragnet_ingested_records_total', { source: 'messenger', outcome: 'added', via: 'api' })).toBe(
      2,
    );
    expect(
      sample(text, 'dragnet_ingested_records_total', { source: 'messenger', outcome: 'duplicate', via: 'api' }),
    ).toBe(2);
    expect(
      sample(text, 'dragnet_deliveries_total', { channel: 'webhook', outcome: 'success', purpose: 'test_webhook' }),
    ).toBe(1);
    expect(
      sample(text, 'dragnet_deliveries_total', { channel: 'webhook', outcome: 'failed', purpose: 'test_webhook' }),
    ).toBe(1);
    expect(sample(text, 'dragnet_delivery_duration_seconds_count', { channel: 'webhook' })).toBe(2);
    expect(sample(text, 'dragnet_queue_depth', { queue: 'notifications', status: 'pending' })).toBe(1);
  });

  it('/healthz is up and /readyz names the store as checked', async () => {
    expect((await t.request({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    const ready = await t.request({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready', store: testEngine, checks: { store: 'ok' }, failed: [] });
  });
});

describe('metrics with a token, and readiness with Redis', () => {
  it('asks every client, loopback too, for the bearer token when DRAGNET_METRICS_TOKEN is set', async () => {
    const t = await createTestApp({ env: { DRAGNET_METRICS_TOKEN: METRICS_TOKEN } });
    try {
      const scrape = (headers: Record<string, string>, remoteAddress?: string) =>
        t.app.inject({ method: 'GET', url: '/metrics', headers, remoteAddress });
      expectError(await scrape({}), 401, 'unauthorized');
      expectError(await scrape({ authorization: `Bearer ${METRICS_TOKEN}x` }), 401, 'unauthorized');
      const remote = await scrape({ authorization: `Bearer ${METRICS_TOKEN}` }, '198.51.100.7');
      expect(remote.statusCode).toBe(200);
      expect(remote.body).toContain('dragnet_rule_runs_total');
    } finally {
      await t.close();
    }
  });

  it('/readyz checks Redis when it is configured: 200 while it answers, 503 naming redis when it does not', async () => {
    const up = await createTestApp({ env: { DRAGNET_REDIS_URL: 'redis://127.0.0.1:6379' } });
    try {
      const ready = await up.request({ method: 'GET', url: '/readyz' });
      expect(ready.statusCode, ready.body).toBe(200);
      expect(ready.json()).toMatchObject({ status: 'ready', checks: { store: 'ok', redis: 'ok' }, failed: [] });
    } finally {
      await up.close();
    }
    // Nothing listens on port 1: the limiter's counts and the probe both fail to connect.
    const down = await createTestApp({ env: { DRAGNET_REDIS_URL: 'redis://127.0.0.1:1' } });
    try {
      const ready = await down.request({ method: 'GET', url: '/readyz' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toMatchObject({
        status: 'unavailable',
        checks: { store: 'ok', redis: 'failed' },
        failed: ['redis'],
      });
      expect((await down.request({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await down.close();
    }
  });
});

describe(`metrics of a worker process (${testEngine})`, () => {
  it(
    'dragnet worker --metrics-port serves its rule runs, deliveries and queue depth, and its readiness',
    async () => {
      const receiver = await startWebhookReceiver();
      const location = await createTestStoreLocation();
      const env = { ...location.env, ...(await rulesEnv()) };
      try {
        // Set up in the past: the rule's first run covers up to March; a message of June is
        // what the worker's hourly run finds.
        const t = await createTestApp({ location: { ...location, env }, env });
        try {
          const user = await t.createUser({ org: 'Worker Org', email: 'w@worker.example' });
          const api = rulesApi(t, (await t.login('w@worker.example')).access, user.org_id, user.id);
          const kit = await createDeliveryKit(api, { tag: 'worker', receiver });
          await t.createUser({ org: 'Operators', email: 'ops@operators.example', role: 'system' });
          const operator = await t.login('ops@operators.example');
          const ingested = await t.request({
            method: 'POST',
            url: '/ingest/messenger/',
            token: operator.access,
            headers: { 'content-type': 'application/x-ndjson' },
            body: messageLine(10, '2026-06-01T10:00:00Z') + '\n',
          });
          expect(ingested.json()).toMatchObject({ accepted: 1 });
          await api.created(sourceRule(kit, 'worker rule', 1, { query: TERM }, { recipients: [], frequency: 'daily' }));
        } finally {
          await t.close();
        }

        // A file dropped into the inbox: the worker's inbox collector ingests it.
        mkdirSync(path.join(location.dataDir, 'inbox', 'messenger'), { recursive: true });
        writeFileSync(
          path.join(location.dataDir, 'inbox', 'messenger', 'drop.jsonl'),
          `${messageLine(20, '2026-06-02T10:00:00Z').replace(TERM, 'unrelated')}\n`,
        );

        const worker = spawnCli(['worker', '--metrics-port', '0'], { env, timeoutMs: scaled(120_000) });
        try {
          await waitFor(
            'the worker to listen',
            () => /metrics on (http:\/\/\S+)\/metrics/.test(worker.output().stdout),
            { timeoutMs: scaled(60_000), everyMs: 50 },
          );
          const base = /metrics on (http:\/\/\S+)\/metrics/.exec(worker.output().stdout)![1]!;
          let text = '';
          await waitFor(
            'the notification and the inbox file',
            async () => {
              text = await (await fetch(`${base}/metrics`)).text();
              return (
                sample(text, 'dragnet_deliveries_total', {
                  channel: 'webhook',
                  outcome: 'success',
                  purpose: 'notification',
                }) === 1 &&
                sample(text, 'dragnet_ingested_records_total', {
                  source: 'messenger',
                  outcome: 'added',
                  via: 'collector',
                }) === 1
              );
            },
            { timeoutMs: scaled(60_000), everyMs: 200 },
          ).catch((error) => {
            throw new Error(
              `${(error as Error).message}\n${JSON.stringify(worker.output())}\n${text
                .split('\n')
                .filter((l) => l.startsWith('dragnet_'))
                .join('\n')}`,
            );
          });
          expect(sample(text, 'dragnet_rule_runs_total', { outcome: 'matched' })).toBe(1);
          expect(sample(text, 'dragnet_rule_runs_total', { outcome: 'failed' })).toBe(0);
          expect(sample(text, 'dragnet_queue_depth', { queue: 'notifications', status: 'pending' })).toBe(0);
          expect(receiver.requests).toHaveLength(1);
          const ready = await fetch(`${base}/readyz`);
          expect(ready.status).toBe(200);
          expect(await ready.json()).toMatchObject({ status: 'ready', checks: { store: 'ok' } });
        } finally {
          worker.child.kill('SIGTERM');
          const ended = await worker.done;
          expect(ended.code, ended.stderr).toBe(0);
        }
      } finally {
        await receiver.close();
        await location.drop();
      }
    },
    scaled(180_000),
  );
});
