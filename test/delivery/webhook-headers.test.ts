import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryApi, deliveryUser, NO_RATE_LIMITS, webhookBody, type DeliveryApi } from '../support/delivery-api.ts';
import { expectError, fieldsOf } from '../support/http.ts';
import { readRawStore, sourcesContaining } from '../support/raw-store.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

const CANARY = 'Bearer hdr-canary-5e1f0a77c2';

/**
 * Webhook custom headers: refused at create and update when they could change how the request
 * is framed or routed, or carry bytes a parser could split on; and sealed at rest (migration
 * 0013 seals the ones stored before), yet sent as given.
 */
describe(`webhook custom headers (${testEngine})`, () => {
  let location: TestStoreLocation;
  let t: TestApp;
  let api: DeliveryApi;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    location = await createTestStoreLocation();
    t = await createTestApp({ location, env: NO_RATE_LIMITS });
    api = await deliveryUser(t, 'Acme', 'alice@acme.test');
  });
  afterAll(async () => {
    await t?.close();
    await location?.drop();
    await receiver?.close();
  });

  it('refuses hop-by-hop and framing headers, and values with control or non-ASCII characters, with a 400 naming the header', async () => {
    const existing = await api.created('webhook', webhookBody('kept', { headers: { 'X-Api-Key': 'k1' } }));
    const refused: Record<string, string>[] = [
      ...[
        'Expect',
        'Upgrade',
        'Keep-Alive',
        'Connection',
        'Transfer-Encoding',
        'Host',
        'Content-Length',
        'TE',
        'Trailer',
        'Proxy-Authorization',
        'proxy-connection',
      ].map((name) => ({ [name]: 'x' })),
      { 'X-Split': 'a\r\nX-Injected: 1' },
      { 'X-Nul': 'a\u0000b' },
      { 'X-Control': 'a\u0001b' },
      { 'X-Del': 'a\u007fb' },
      { 'X-Latin': 'naïve' },
      { 'X-Emoji': 'ok 👍' },
    ];
    for (const headers of refused) {
      const name = Object.keys(headers)[0]!;
      const created = expectError(
        await api.create('webhook', webhookBody('bad', { headers })),
        400,
        'validation_failed',
      );
      expect(fieldsOf(created), name).toEqual([`headers.${name}`]);
      const updated = expectError(
        await api.update('webhook', existing.id, webhookBody('kept', { headers })),
        400,
        'validation_failed',
      );
      expect(fieldsOf(updated), name).toEqual([`headers.${name}`]);
    }
    expect((await api.list('webhook')).json()).toMatchObject({
      count: 1,
      results: [{ headers: { 'X-Api-Key': 'k1' } }],
    });
    expect((await api.remove('webhook', existing.id)).statusCode).toBe(204);
  });

  it('stores header values sealed, shows them to the organization and sends them', async () => {
    const hook = await api.created<{ headers: Record<string, string> }>(
      'webhook',
      webhookBody('sealed', { url: receiver.url('/sealed'), headers: { Authorization: CANARY, 'X-Tab': 'a\tb' } }),
    );
    expect(hook.headers).toEqual({ Authorization: CANARY, 'X-Tab': 'a\tb' });
    expect((await api.testWebhook(hook.id)).json()).toMatchObject({ status: 'success' });
    expect(receiver.requests.at(-1)!.headers.authorization).toBe(CANARY);
    expect(sourcesContaining(await readRawStore(location), CANARY)).toEqual([]);
    expect((await api.remove('webhook', hook.id)).statusCode).toBe(204);
  });

  it('migration 0013 seals the headers stored before it', async () => {
    const hook = await api.created('webhook', webhookBody('old', { url: receiver.url('/old'), headers: {} }));
    // The store as the previous version left it: the plain JSON column, 0013 not applied.
    const db = t.container.store.db;
    await sql`update webhooks set headers_sealed = ${JSON.stringify({ Authorization: CANARY })} where id = ${hook.id}`.execute(
      db,
    );
    await sql`alter table webhooks rename column headers_sealed to headers`.execute(db);
    await sql`delete from kysely_migration where name = '0013_sealed_webhook_headers'`.execute(db);
    await t.close();
    t = await createTestApp({ location, env: NO_RATE_LIMITS });
    const again = deliveryApi(t, (await t.login('alice@acme.test')).access, api.orgId);
    expect((await again.list('webhook')).json()).toMatchObject({
      results: [{ id: hook.id, headers: { Authorization: CANARY } }],
    });
    expect(sourcesContaining(await readRawStore(location), CANARY)).toEqual([]);
    expect((await again.testWebhook(hook.id)).json()).toMatchObject({ status: 'success' });
    expect(receiver.requests.at(-1)!.headers.authorization).toBe(CANARY);
  });
});
