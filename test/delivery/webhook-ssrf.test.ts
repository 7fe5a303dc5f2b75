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
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

async function startIpv6Receiver(): Promise<WebhookReceiver | undefined> {
  try {
    return await startWebhookReceiver('::1');
  } catch {
    return undefined; // no IPv6 loopback on this machine
  }
}

async function testWebhook(api: DeliveryApi, url: string): Promise<DeliveryAttemptView> {
  const created = await api.create('webhook', webhookBody(`w-${Math.random().toString(36).slice(2)}`, { url }));
  expect(created.statusCode, created.body).toBe(201);
  const response = await api.testWebhook(created.json().id);
  expect(response.statusCode, response.body).toBe(200);
  const attempt = response.json() as DeliveryAttemptView;
  // Keep under the limit of 10 webhooks.
  expect((await api.remove('webhook', created.json().id)).statusCode).toBe(204);
  return attempt;
}

describe(`webhook SSRF guard (${testEngine})`, () => {
  let receiver: WebhookReceiver;
  let receiver6: WebhookReceiver | undefined;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    receiver6 = await startIpv6Receiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await receiver6?.close();
  });

  describe('without an allow-list', () => {
    let t: TestApp;
    let api: DeliveryApi;

    beforeAll(async () => {
      t = await createTestApp({
        env: { ...NO_RATE_LIMITS, DRAGNET_OUTBOUND_ALLOW_HOSTS: '', DRAGNET_WEBHOOK_TIMEOUT_MS: '2000' },
      });
      api = await deliveryUser(t, 'Acme', 'alice@acme.test');
    });
    afterAll(() => t?.close());

    const refusedTargets = () => [
      ['loopback 127.0.0.1', receiver.url('/a')],
      ['IPv6 loopback [::1]', `http://[::1]:${receiver6?.port ?? receiver.port}/a`],
      ['private 10.0.0.1', 'http://10.0.0.1/hook'],
      ['cloud metadata 169.254.169.254', 'http://169.254.169.254/latest/meta-data/'],
      ['a name resolving to loopback (localhost)', `http://localhost:${receiver.port}/a`],
      ['IPv4-mapped IPv6 loopback', `http://[::ffff:127.0.0.1]:${receiver.port}/a`],
      ['decimal-encoded 127.0.0.1', `http://2130706433:${receiver.port}/a`],
      ['unspecified 0.0.0.0', `http://0.0.0.0:${receiver.port}/a`],
      ['private 192.168.1.1', 'https://192.168.1.1/hook'],
      ['CGNAT 100.64.0.1', 'http://100.64.0.1/hook'],
      ['unique-local IPv6', 'http://[fd00::1]/hook'],
      ['metadata name', 'http://metadata.google.internal/computeMetadata/v1/'],
    ];

    it('refuses every non-public destination: the attempt is failed with an error starting "refused", nothing is sent', async () => {
      for (const [what, url] of refusedTargets()) {
        const attempt = await testWebhook(api, url!);
        expect(attempt.status, what).toBe('failed');
        expect(attempt.status_code, what).toBeNull();
        expect(attempt.error, what).toMatch(/^refused/);
        expect(attempt.target, what).toBe(url);
      }
      expect(receiver.requests).toHaveLength(0);
      expect(receiver6?.requests ?? []).toHaveLength(0);
    });

    it('records the refusals in the attempts list', async () => {
      const failed = await api.attempts({ channel: 'webhook', status: 'failed', page_size: 100 });
      expect(failed.count).toBe(refusedTargets().length);
      for (const attempt of failed.results) expect(attempt.error).toMatch(/^refused/);
    });
  });

  describe('with DRAGNET_WEBHOOK_ALLOW_HOSTS=127.0.0.1', () => {
    let t: TestApp;
    let api: DeliveryApi;

    beforeAll(async () => {
      t = await createTestApp({
        env: {
          ...NO_RATE_LIMITS,
          DRAGNET_OUTBOUND_ALLOW_HOSTS: '',
          DRAGNET_WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
          DRAGNET_WEBHOOK_TIMEOUT_MS: '2000',
        },
      });
      api = await deliveryUser(t, 'Acme', 'alice@acme.test');
    });
    afterAll(() => t?.close());

    it('the loopback receiver gets the delivery', async () => {
      const before = receiver.requests.length;
      const attempt = await testWebhook(api, receiver.url('/allowed'));
      expect(attempt).toMatchObject({ status: 'success', status_code: 204, error: null });
      expect(receiver.requests.length).toBe(before + 1);
      expect(receiver.requests.at(-1)!.url).toBe('/allowed');
    });

    it('the allow-list is exact: other private addresses stay refused', async () => {
      for (const url of [
        'http://10.0.0.1/hook',
        'http://169.254.169.254/latest/meta-data/',
        `http://[::1]:${receiver6?.port ?? receiver.port}/a`,
      ]) {
        const attempt = await testWebhook(api, url);
        expect(attempt.status, url).toBe('failed');
        expect(attempt.error, url).toMatch(/^refused/);
      }
      expect(receiver6?.requests ?? []).toHaveLength(0);
    });
  });
});
