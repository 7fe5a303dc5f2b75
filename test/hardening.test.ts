import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock, type ManualClock } from '../src/lib/clock.ts';
import { deliveryApi, templateBody, webhookBody } from './support/delivery-api.ts';
import { expectError } from './support/http.ts';
import { createTestApp, type TestApp } from './support/test-app.ts';
import { testEngine } from './support/test-store.ts';

/**
 * Defects found by fuzzing (issue #15), each answered as bad input now: a 4xx with the error
 * body, never a 500.
 */
describe(`hardening against hostile input (${testEngine})`, () => {
  let t: TestApp;
  let access: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { DRAGNET_RATE_LIMITS: 'off' } });
    await t.createUser({ org: 'Hardening', email: 'h@hardening.test' });
    ({ access } = await t.login('h@hardening.test'));
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty', '__proto__ AND constructor', '"__proto__" OR valueOf'])(
    'a search for %s is an ordinary search, not a 500',
    async (query) => {
      const response = await t.request({ method: 'POST', url: '/service/messenger-search-create/', token: access, body: { query } });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json()).toMatchObject({ total: 0 });
    },
  );

  const nested = (depth: number, open: string, close: string, inner = '1') => open.repeat(depth) + inner + close.repeat(depth);

  it.each([
    ['POST', '/token/', nested(100_000, '{"a":', '}')],
    ['POST', '/token/', nested(200_000, '[', ']')],
    ['POST', '/token/refresh/', `{"refresh":${nested(100_000, '[', ']')}}`],
    ['POST', '/service/verify_2fa_enrollment/', `{"otp":${nested(100_000, '{"a":', '}')}}`],
    ['POST', '/service/messenger-search-create/', `{"query":"acme","channel_ids":${nested(50_000, '[', ']')}}`],
    ['DELETE', '/service/alert_system_alert_delete_alert_rule/1/', nested(100_000, '[', ']')],
  ])('%s %s with a body nested far too deep is a 400', async (method, url, payload) => {
    const response = await t.app.inject({ method: method as 'POST', url, payload, headers: { 'content-type': 'application/json', authorization: `Bearer ${access}` } });
    const body = expectError(response, 400, 'bad_request');
    expect(body.message).toContain('nests deeper than 64 levels');
  });

  it('brackets inside strings do not count as nesting', async () => {
    const response = await t.request({ method: 'POST', url: '/service/messenger-search-create/', token: access, body: { query: `"${'['.repeat(500)}"` } });
    expect(response.statusCode, response.body).toBe(200);
  });
});

describe(`small defects of #15 (${testEngine})`, () => {
  let t: TestApp;
  let access: string;
  let refresh: string;
  let orgId: number;

  beforeAll(async () => {
    // The real clock: created_at and updated_at are two readings of it unless taken once.
    t = await createTestApp({ env: { DRAGNET_RATE_LIMITS: 'off' }, clock: systemClock as ManualClock });
    ({ org_id: orgId } = await t.createUser({ org: 'Defects', email: 'd@defects.test' }));
    ({ access, refresh } = await t.login('d@defects.test'));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a new webhook and a new template have updated_at equal to created_at', async () => {
    const delivery = deliveryApi(t, access, orgId);
    type Stamped = { created_at: string; updated_at: string };
    for (const created of [await delivery.created<Stamped>('webhook', webhookBody('hook')), await delivery.created<Stamped>('template', templateBody('tpl'))]) {
      expect(created.updated_at).toBe(created.created_at);
    }
  });

  it('an access token sent to refresh says "not a refresh token"', async () => {
    const wrong = await t.request({ method: 'POST', url: '/token/refresh/', body: { refresh: access } });
    expect(expectError(wrong, 401, 'unauthorized').message).toBe('not a refresh token');
    const right = await t.request({ method: 'POST', url: '/token/refresh/', body: { refresh } });
    expect(right.statusCode).toBe(200);
  });
});

describe(`unusual methods (${testEngine})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a method a path does not take is a 405 naming the ones it does; an unknown path stays 404', async () => {
    const trace = await t.app.inject({ method: 'TRACE' as 'GET', url: '/token/' });
    expect(expectError(trace, 405, 'method_not_allowed').message).toContain('allowed: POST');
    expect(trace.headers.allow).toBe('POST');
    const get = await t.app.inject({ method: 'GET', url: '/token/refresh/' });
    expectError(get, 405, 'method_not_allowed');
    expectError(await t.app.inject({ method: 'TRACE' as 'GET', url: '/no/such/path/' }), 404, 'not_found');
  });
});
