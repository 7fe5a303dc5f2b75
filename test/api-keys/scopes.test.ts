import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerAuthentication, requireAuth } from '../../src/http/auth.plugin.ts';
import { registerErrorHandling } from '../../src/http/error-handler.ts';
import { NO_RATE_LIMITS } from '../support/delivery-api.ts';
import { DEFAULT_PASSWORD, createTestApp, type TestApp } from '../support/test-app.ts';
import { expectError } from '../support/http.ts';
import { expectTaxiiError, injectedAnswer } from '../support/taxii-client.ts';
import { basicAuthorization, createKey, revokePath } from './support.ts';

/**
 * docs/api.md "API keys": the only routes other than GET and HEAD that a key of scope read
 * may call. Every other one changes something and must refuse it.
 */
const READ_ONLY_POSTS = ['POST /service/messenger-search-create/', 'POST /service/alert_system_rule_preview/'];
/** Routes no API key may call, whatever its scope (403 session_required). */
const SESSION_ONLY = [
  'POST /service/setup_2fa/',
  'POST /service/verify_2fa_enrollment/',
  'POST /service/disable_2fa/',
  'POST /service/new_backup_codes/',
  'POST /service/new_password/',
  'POST /service/alert_system_api_key_create/',
  'GET /service/alert_system_api_key_list/',
  'POST /service/alert_system_api_key_revoke/{id}/',
];

interface Operation {
  method: string;
  path: string;
}

/** Every operation the app declares that takes a token (the OpenAPI document lists them all). */
function authenticatedOperations(t: TestApp): Operation[] {
  const document = t.app.swagger() as { paths: Record<string, Record<string, { security?: unknown[] }>> };
  return Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.entries(operations)
      .filter(([, operation]) => (operation.security ?? []).length > 0)
      .map(([method]) => ({ method: method.toUpperCase(), path })),
  );
}

const concrete = (path: string) => path.replace(/\{[^}]+\}/g, '1');

describe('API key scopes over every route', () => {
  let t: TestApp;
  let readKey: string;
  let writeKey: string;

  beforeAll(async () => {
    // Some 70 requests at one instant of the test clock: the account-wide limits are not the subject.
    t = await createTestApp({ env: NO_RATE_LIMITS });
    await t.app.ready();
    await t.createUser({ org: 'Acme', email: 'owner@acme.test', role: 'system' });
    const token = (await t.login('owner@acme.test')).access;
    readKey = (await createKey(t, token, { name: 'read' })).key;
    writeKey = (await createKey(t, token, { name: 'write', scope: 'read_write' })).key;
  });
  afterAll(() => t.close());

  const send = (operation: Operation, key: string) =>
    t.request({
      method: operation.method,
      url: concrete(operation.path),
      token: key,
      ...(['POST', 'PUT', 'PATCH'].includes(operation.method) ? { body: {} } : {}),
    });

  it('refuses a read key on every route that changes something, and only there', async () => {
    const operations = authenticatedOperations(t);
    const changing = operations.filter(
      (o) => !['GET', 'HEAD'].includes(o.method) && !READ_ONLY_POSTS.includes(`${o.method} ${o.path}`),
    );
    // The document is the app's whole route list: the ingest route outside /service/ included.
    expect(changing.length).toBeGreaterThan(25);
    expect(changing).toContainEqual({ method: 'POST', path: '/ingest/{ingester}/' });
    for (const key of READ_ONLY_POSTS.concat(SESSION_ONLY)) {
      const [method, path] = key.split(' ');
      expect(operations, key).toContainEqual({ method, path });
    }

    for (const operation of operations) {
      const name = `${operation.method} ${operation.path}`;
      const response = await send(operation, readKey);
      if (SESSION_ONLY.includes(name)) expectError(response, 403, 'session_required');
      else if (changing.includes(operation) && operation.path.startsWith('/taxii2/')) {
        // TAXII answers every error in its own envelope (docs/taxii.md).
        expect(expectTaxiiError(injectedAnswer(response), 403).error_code, name).toBe('insufficient_scope');
      } else if (changing.includes(operation)) {
        const error = expectError(response, 403, 'insufficient_scope');
        expect(error.required_scope, name).toBe('read_write');
      } else expect([401, 403], `${name}: ${response.body}`).not.toContain(response.statusCode);
    }
  });

  it('lets a read_write key past the scope check on every route but the session-only ones', async () => {
    for (const operation of authenticatedOperations(t)) {
      const name = `${operation.method} ${operation.path}`;
      const response = await send(operation, writeKey);
      if (SESSION_ONLY.includes(name)) expectError(response, 403, 'session_required');
      else expect([401, 403], `${name}: ${response.body}`).not.toContain(response.statusCode);
    }
  });
});

describe('API keys as the password of HTTP Basic', () => {
  let t: TestApp;
  let feed: FastifyInstance;
  let token: string;

  beforeAll(async () => {
    t = await createTestApp();
    await t.createUser({ org: 'Acme', email: 'owner@acme.test' });
    token = (await t.login('owner@acme.test')).access;
    // A route like the TAXII and MISP feed ones, wired as app.ts wires authentication.
    feed = Fastify();
    registerErrorHandling(feed);
    feed.addHook('onRequest', (request, reply, done) => {
      reply.header('x-request-id', request.id);
      done();
    });
    registerAuthentication(feed, {
      auth: t.container.auth,
      organizations: t.container.organizations,
      apiKeys: t.container.apiKeys,
    });
    feed.get('/feed/', { config: { requiresAuth: true, basicAuth: true } }, (request) => {
      const auth = requireAuth(request);
      return { email: auth.user.email, org_id: auth.orgId, key: auth.apiKey?.name ?? null };
    });
    await feed.ready();
  });
  afterAll(async () => {
    await feed.close();
    await t.close();
  });

  const fetchFeed = (authorization?: string) =>
    feed.inject({ method: 'GET', url: '/feed/', headers: authorization ? { authorization } : {} });

  it('takes an API key as the Basic password, whatever the user part', async () => {
    const { id, key } = await createKey(t, token, { name: 'taxii client' });
    for (const user of ['', 'anything', 'owner@acme.test']) {
      const response = await fetchFeed(basicAuthorization(user, key));
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json()).toEqual({ email: 'owner@acme.test', org_id: expect.any(Number), key: 'taxii client' });
    }
    // Bearer works there too, a key or a person's token.
    expect((await fetchFeed(`Bearer ${key}`)).statusCode).toBe(200);
    expect((await fetchFeed(`Bearer ${token}`)).json()).toMatchObject({ key: null });

    await t.request({ method: 'POST', url: revokePath(id), token });
    const revoked = expectError(await fetchFeed(basicAuthorization('x', key)), 401, 'unauthorized');
    expect(revoked.message).toMatch(/revoked/);
  });

  it("never takes a person's password, and challenges with Basic", async () => {
    for (const authorization of [
      basicAuthorization('owner@acme.test', DEFAULT_PASSWORD),
      basicAuthorization('owner@acme.test', token),
      undefined,
    ]) {
      const response = await fetchFeed(authorization);
      expectError(response, 401, 'unauthorized');
      expect(response.headers['www-authenticate']).toMatch(/^Basic realm="dragnet"/);
    }
  });

  it('is refused on ordinary /service/ routes', async () => {
    const { key } = await createKey(t, token, { name: 'not here' });
    const response = await t.request({
      method: 'GET',
      url: '/service/account/',
      headers: { authorization: basicAuthorization('owner@acme.test', key) },
    });
    expectError(response, 401, 'unauthorized');
    expect(response.headers['www-authenticate']).toBe('Bearer realm="dragnet"');
  });
});
