import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  deliveryUser,
  NO_RATE_LIMITS,
  webhookBody,
  type DeliveryApi,
  type DeliveryAttemptView,
} from '../support/delivery-api.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';
import {
  startWebhookReceiver,
  verifyAlertSystemSignature,
  verifyStandardWebhook,
  type WebhookReceiver,
} from '../support/webhook-receiver.ts';
import { waitFor } from '../support/wait.ts';

interface WebhookView {
  id: number;
  url: string;
  secret: string;
  headers: Record<string, string>;
}

const ISO_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?[+-]\d{2}:\d{2}$/;

describe(`webhook delivery to a loopback receiver (${testEngine})`, () => {
  let t: TestApp;
  let api: DeliveryApi;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    t = await createTestApp({
      env: { ...NO_RATE_LIMITS, DRAGNET_WEBHOOK_ALLOW_HOSTS: '127.0.0.1', DRAGNET_WEBHOOK_TIMEOUT_MS: '5000' },
    });
    api = await deliveryUser(t, 'Acme', 'alice@acme.test');
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  const newWebhook = (name: string, extra: Record<string, unknown> = {}) =>
    api.created<WebhookView>('webhook', webhookBody(name, { url: receiver.url(`/${name}`), ...extra }));

  const fire = async (webhook: WebhookView) => {
    const response = await api.testWebhook(webhook.id);
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as DeliveryAttemptView;
  };

  it('POSTs a compact, signed JSON body with the fixed and custom headers (allow-listed loopback)', async () => {
    receiver.respond({ status: 204 });
    const webhook = await newWebhook('signed', { headers: { 'X-Api-Key': 'k-123', Authorization: 'Bearer tok-456' } });
    expect(webhook.secret).toMatch(/^whsec_/);
    const before = receiver.requests.length;
    const attempt = await fire(webhook);
    expect(attempt).toMatchObject({
      channel: 'webhook',
      purpose: 'test_webhook',
      status: 'success',
      status_code: 204,
      error: null,
      target: webhook.url,
    });

    expect(receiver.requests).toHaveLength(before + 1);
    const request = receiver.requests[before]!;
    expect(request.method).toBe('POST');
    expect(request.url).toBe('/signed');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['user-agent']).toBe('AlertSystem/1.0');
    expect(request.headers['x-api-key']).toBe('k-123');
    expect(request.headers.authorization).toBe('Bearer tok-456');

    // Compact JSON: the bytes are exactly what JSON.stringify makes of them.
    const text = request.body.toString('utf8');
    expect(text).toBe(JSON.stringify(JSON.parse(text)));

    // spec 6.2's recipe: strip sha256=, HMAC-SHA256 over the received bytes keyed with the secret string.
    expect(request.headers['x-alertsystem-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(verifyAlertSystemSignature(webhook.secret, request.body, request.headers['x-alertsystem-signature'])).toBe(
      true,
    );
    // ... and the verifier is not a rubber stamp.
    const tampered = Buffer.from(request.body);
    tampered[tampered.length - 2] = tampered[tampered.length - 2]! ^ 1;
    expect(verifyAlertSystemSignature(webhook.secret, tampered, request.headers['x-alertsystem-signature'])).toBe(
      false,
    );
    expect(
      verifyAlertSystemSignature(`${webhook.secret}x`, request.body, request.headers['x-alertsystem-signature']),
    ).toBe(false);

    // Standard Webhooks: v1,<base64> keyed with the decoded whsec_ part over id.timestamp.body.
    expect(request.headers['webhook-id']).toEqual(expect.any(String));
    expect(request.headers['webhook-timestamp']).toBe(String(Math.floor(t.clock.now().getTime() / 1000)));
    expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+={0,2}$/);
    expect(verifyStandardWebhook(webhook.secret, request)).toBe(true);
    expect(verifyStandardWebhook(webhook.secret, { ...request, body: tampered })).toBe(false);
    expect(
      verifyStandardWebhook(webhook.secret, { ...request, headers: { ...request.headers, 'webhook-id': 'msg_other' } }),
    ).toBe(false);
  });

  it('sends the generic payload: exactly the six fields of spec 6.2, no hits', async () => {
    receiver.respond({ status: 200 });
    const webhook = await newWebhook('generic');
    const before = receiver.requests.length;
    await fire(webhook);
    const payload = JSON.parse(receiver.requests[before]!.body.toString('utf8')) as Record<string, unknown>;
    expect(Object.keys(payload).sort()).toEqual([
      'alert_rule_name',
      'excluded_matches',
      'results_url',
      'service',
      'timestamp',
      'total_matches',
    ]);
    expect(payload).toMatchObject({
      alert_rule_name: expect.any(String),
      service: expect.any(String),
      total_matches: 0,
      excluded_matches: 0,
    });
    // The results link is under the organization's dashboard URL.
    const organization = await t.request({ method: 'GET', url: '/service/organization/', token: api.token });
    expect(String(payload.results_url).startsWith(`${organization.json().dashboard_url}/`)).toBe(true);
    expect(payload.timestamp).toMatch(ISO_WITH_OFFSET);
    expect(Date.parse(String(payload.timestamp))).toBe(t.clock.now().getTime());
  });

  it('deliverWebhook (what rules use) sends the notice values and records rule and match ids', async () => {
    receiver.respond({ status: 202 });
    const webhook = await newWebhook('notice');
    const row = await t.container.delivery.webhookRow(api.orgId, webhook.id);
    const before = receiver.requests.length;
    const at = new Date('2026-03-10T10:11:12.345Z');
    const attempt = await t.container.delivery.deliverWebhook(
      api.orgId,
      row,
      {
        alertRuleName: 'Acme leaks',
        service: 'Telegram',
        totalMatches: 12,
        excludedMatches: 5,
        resultsUrl: 'https://dash.acme.test/incidents/9',
        at,
      },
      { purpose: 'notification', ruleId: 3, matchId: 77 },
    );
    expect(attempt).toMatchObject({
      status: 'success',
      status_code: 202,
      purpose: 'notification',
      rule_id: 3,
      match_id: 77,
    });
    const request = receiver.requests[before]!;
    expect(JSON.parse(request.body.toString('utf8'))).toEqual({
      alert_rule_name: 'Acme leaks',
      service: 'Telegram',
      total_matches: 12,
      excluded_matches: 5,
      results_url: 'https://dash.acme.test/incidents/9',
      timestamp: expect.stringMatching(ISO_WITH_OFFSET),
    });
    expect(Date.parse(JSON.parse(request.body.toString('utf8')).timestamp)).toBe(at.getTime());
    expect(verifyAlertSystemSignature(webhook.secret, request.body, request.headers['x-alertsystem-signature'])).toBe(
      true,
    );
    const listed = await api.attempts({ rule_id: 3 });
    expect(listed.results.map((a) => a.id)).toEqual([attempt.id]);
  });

  it('each delivery has its own webhook-id; the secret stays the same across deliveries and updates', async () => {
    receiver.respond({ status: 200 });
    const webhook = await newWebhook('twice');
    const before = receiver.requests.length;
    await fire(webhook);
    const updated = await api.update(
      'webhook',
      webhook.id,
      webhookBody('twice', { url: webhook.url, headers: { 'X-Extra': '1' } }),
    );
    expect(updated.statusCode).toBe(200);
    expect(updated.json().secret).toBe(webhook.secret);
    await fire(webhook);
    const [first, second] = receiver.requests.slice(before);
    expect(first!.headers['webhook-id']).not.toBe(second!.headers['webhook-id']);
    expect(second!.headers['x-extra']).toBe('1');
    for (const request of [first!, second!]) {
      expect(verifyAlertSystemSignature(webhook.secret, request.body, request.headers['x-alertsystem-signature'])).toBe(
        true,
      );
      expect(verifyStandardWebhook(webhook.secret, request)).toBe(true);
    }
  });

  it('a non-2xx answer is recorded as failed with its status_code, and not retried', async () => {
    for (const status of [500, 404, 429]) {
      receiver.respond({ status });
      const webhook = await newWebhook(`fails-${status}`);
      const before = receiver.requests.length;
      const attempt = await fire(webhook);
      expect(attempt).toMatchObject({
        status: 'failed',
        status_code: status,
        channel: 'webhook',
        purpose: 'test_webhook',
      });
      expect(attempt.error).toContain(String(status));
      expect(receiver.requests.length - before).toBe(1);
      const failed = await api.attempts({ status: 'failed', channel: 'webhook' });
      expect(failed.results[0]).toEqual(attempt);
    }
  });

  it('does not follow redirects (a 3xx is a failure, and the Location is never requested)', async () => {
    const elsewhere = await startWebhookReceiver();
    try {
      receiver.respond({ status: 302, headers: { location: elsewhere.url('/stolen') } });
      const webhook = await newWebhook('redirects');
      const attempt = await fire(webhook);
      expect(attempt).toMatchObject({ status: 'failed', status_code: 302 });
      expect(elsewhere.requests).toHaveLength(0);
    } finally {
      await elsewhere.close();
    }
  });
});

describe(`webhook timeout (${testEngine})`, () => {
  let t: TestApp;
  let api: DeliveryApi;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver('127.0.0.1', 'hang');
    t = await createTestApp({
      env: { ...NO_RATE_LIMITS, DRAGNET_WEBHOOK_ALLOW_HOSTS: '127.0.0.1', DRAGNET_WEBHOOK_TIMEOUT_MS: '500' },
    });
    api = await deliveryUser(t, 'Acme', 'alice@acme.test');
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('a receiver that never answers is recorded as failed with a timeout error, after one request only', async () => {
    const webhook = await api.created<WebhookView>('webhook', webhookBody('hangs', { url: receiver.url('/hangs') }));
    const started = Date.now();
    const response = await api.testWebhook(webhook.id);
    const elapsed = Date.now() - started;
    expect(response.statusCode, response.body).toBe(200);
    const attempt = response.json() as DeliveryAttemptView;
    expect(attempt).toMatchObject({ status: 'failed', status_code: null, channel: 'webhook' });
    expect(attempt.error).toMatch(/time/i);
    expect(elapsed).toBeGreaterThanOrEqual(450);
    expect(elapsed).toBeLessThan(5_000);
    expect(attempt.duration_ms).toBeGreaterThanOrEqual(450);
    // No retry: once the client has hung up and no delivery is in flight, nothing is left to send one.
    await waitFor('the client to hang up', () => receiver.openConnections() === 0);
    await t.container.delivery.idle();
    expect(receiver.requests).toHaveLength(1);
    expect((await api.attempts({ channel: 'webhook' })).count).toBe(1);
  });
});
