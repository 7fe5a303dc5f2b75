import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, fieldsOf } from './support/http.ts';
import { createTestApp, DEFAULT_PASSWORD, type TestApp } from './support/test-app.ts';

const BODY_LIMIT = 2048;

describe('error responses', () => {
  let t: TestApp;
  let access: string;
  const seen: LightMyRequestResponse[] = [];

  beforeAll(async () => {
    t = await createTestApp({ env: { DRAGNET_BODY_LIMIT_BYTES: String(BODY_LIMIT) } });
    await t.createUser({ org: 'Acme', email: 'alice@acme.test' });
    ({ access } = await t.login('alice@acme.test'));
  });
  afterAll(() => t.close());

  /** Injects and remembers the response, so the last test can check none was a 5xx. */
  async function send(options: InjectOptions): Promise<LightMyRequestResponse> {
    const response = await t.app.inject(options);
    seen.push(response);
    return response;
  }
  const postJson = (url: string, payload: string, headers: Record<string, string> = {}) =>
    send({ method: 'POST', url, payload, headers: { 'content-type': 'application/json', ...headers } });

  it('malformed JSON is 400 with a code and request_id', async () => {
    const body = expectError(await postJson('/token/', '{"email": "alice@acme.test", "password": '), 400);
    expect(body.code).toBe('bad_request');
  });

  it('an empty JSON body is 400', async () => {
    expectError(await postJson('/token/', ''), 400);
  });

  it('a body that is JSON but not an object is 400', async () => {
    expectError(await postJson('/token/', '[1, 2]'), 400, 'validation_failed');
    expectError(await postJson('/token/', 'null'), 400, 'validation_failed');
  });

  it('a wrong type is 400 naming the field, not coerced', async () => {
    const body = expectError(
      await send({ method: 'POST', url: '/token/', payload: { email: 5, password: DEFAULT_PASSWORD } }),
      400,
    );
    expect(body.code).toBe('validation_failed');
    expect(fieldsOf(body)).toEqual(['email']);
  });

  it('an unknown body field is 400 naming it', async () => {
    const body = expectError(
      await send({
        method: 'POST',
        url: '/token/',
        payload: { email: 'alice@acme.test', password: DEFAULT_PASSWORD, remember_me: true },
      }),
      400,
      'validation_failed',
    );
    expect(fieldsOf(body)).toEqual(['remember_me']);
  });

  it('a missing field is 400 naming it', async () => {
    const body = expectError(
      await send({ method: 'POST', url: '/token/', payload: { email: 'alice@acme.test' } }),
      400,
      'validation_failed',
    );
    expect(fieldsOf(body)).toEqual(['password']);
  });

  it('names every offending field at once', async () => {
    const body = expectError(
      await send({ method: 'POST', url: '/token/', payload: { email: 5, extra: 1 } }),
      400,
      'validation_failed',
    );
    expect(fieldsOf(body).sort()).toEqual(['email', 'extra', 'password']);
  });

  it('validates bodies of authenticated routes the same way', async () => {
    const body = expectError(
      await send({
        method: 'POST',
        url: '/service/new_password/',
        headers: { authorization: `Bearer ${access}` },
        payload: { password: DEFAULT_PASSWORD, new_password: 12345678901 },
      }),
      400,
      'validation_failed',
    );
    expect(fieldsOf(body).sort()).toEqual(['confirm_new_password', 'new_password']);
  });

  it('a body over the configured limit is 413', async () => {
    const payload = JSON.stringify({ email: 'alice@acme.test', password: 'x'.repeat(BODY_LIMIT + 100) });
    expectError(await postJson('/token/', payload), 413, 'payload_too_large');
    // A body within the limit is judged normally (1,024 is the longest password the schema takes).
    const fits = JSON.stringify({ email: 'alice@acme.test', password: 'x'.repeat(1024) });
    expect(Buffer.byteLength(fits)).toBeLessThan(BODY_LIMIT);
    expectError(await postJson('/token/', fits), 401, 'invalid_credentials');
  });

  it('a body in a media type the API does not take is a 4xx', async () => {
    const response = await send({
      method: 'POST',
      url: '/token/',
      payload: '<login/>',
      headers: { 'content-type': 'application/xml' },
    });
    expectError(response, 415, 'unsupported_media_type');
  });

  it('an unknown path is a JSON 404', async () => {
    expectError(await send({ method: 'GET', url: '/no/such/thing/' }), 404, 'not_found');
    expectError(
      await send({ method: 'GET', url: '/service/no_such_thing/', headers: { authorization: `Bearer ${access}` } }),
      404,
      'not_found',
    );
  });

  it('a path without its trailing slash is 404 (and says so)', async () => {
    const body = expectError(
      await send({ method: 'POST', url: '/token', payload: { email: 'alice@acme.test', password: DEFAULT_PASSWORD } }),
      404,
      'not_found',
    );
    expect(body.message).toContain('/token/');
    expectError(
      await send({ method: 'GET', url: '/service/account', headers: { authorization: `Bearer ${access}` } }),
      404,
      'not_found',
    );
    expectError(await send({ method: 'POST', url: '/token/refresh', payload: { refresh: 'x' } }), 404, 'not_found');
  });

  it('a NUL character in a body or a query is 400 naming where it is, on any path', async () => {
    const nul = (response: LightMyRequestResponse) => fieldsOf(expectError(response, 400, 'validation_failed'));
    expect(nul(await postJson('/token/', JSON.stringify({ email: 'alice\u0000@acme.test', password: 'x' })))).toEqual([
      'email',
    ]);
    // A path no route serves: checked before its 404.
    expect(nul(await postJson('/no-such-path/', JSON.stringify({ a: [{ b: 'ok' }, { b: 'x\u0000' }] })))).toEqual([
      'a[1].b',
    ]);
    expect(nul(await send({ method: 'GET', url: '/healthz?probe=a%00b' }))).toEqual(['probe']);
  });

  it('the request id differs per request and is echoed in x-request-id on success too', async () => {
    const a = expectError(await send({ method: 'GET', url: '/no/such/thing/' }), 404);
    const b = expectError(await send({ method: 'GET', url: '/no/such/thing/' }), 404);
    expect(a.request_id).not.toBe(b.request_id);
    const ok = await send({ method: 'GET', url: '/service/account/', headers: { authorization: `Bearer ${access}` } });
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['x-request-id']).toEqual(expect.any(String));
  });

  it('none of the above was a 5xx', () => {
    expect(seen.length).toBeGreaterThan(10);
    expect(seen.filter((r) => r.statusCode >= 500).map((r) => `${r.statusCode} ${r.body}`)).toEqual([]);
  });
});
