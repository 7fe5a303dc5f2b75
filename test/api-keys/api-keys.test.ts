import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceScope } from '../../src/modules/usage/limits.ts';
import { NO_RATE_LIMITS } from '../support/delivery-api.ts';
import { expectError } from '../support/http.ts';
import { expectRateLimited } from '../support/rate-limits.ts';
import { readRawStore, sourcesContaining } from '../support/raw-store.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { waitFor } from '../support/wait.ts';
import { CREATE_PATH, createKey, LIST_PATH, revokePath, type ApiKeyBody } from './support.ts';

const ACCOUNT = '/service/account/';

describe('API keys', () => {
  let t: TestApp;
  let owner: string;
  let colleague: string;
  let stranger: string;
  let orgId: number;

  beforeAll(async () => {
    // The limits have a test of their own below: here, polling the audit log must not meet them.
    t = await createTestApp({ env: NO_RATE_LIMITS });
    orgId = (await t.createUser({ org: 'Acme', email: 'owner@acme.test' })).org_id;
    await t.createUser({ org: 'Acme', email: 'colleague@acme.test' });
    await t.createUser({ org: 'Other', email: 'someone@other.test' });
    owner = (await t.login('owner@acme.test')).access;
    colleague = (await t.login('colleague@acme.test')).access;
    stranger = (await t.login('someone@other.test')).access;
  });
  afterAll(() => t.close());

  const get = (url: string, token: string, headers?: Record<string, string>) =>
    t.request({ method: 'GET', url, token, headers });
  const list = async (token = owner) => {
    const response = await get(LIST_PATH, token);
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as { count: number; next: string | null; previous: string | null; results: ApiKeyBody[] };
  };
  const auditEvents = async (event: string) => {
    const response = await get(`/service/audit_log/?event=${event}`, owner);
    expect(response.statusCode, response.body).toBe(200);
    return (
      response.json() as {
        results: { target_id: number; actor_email: string; ip_address: string; details: Record<string, unknown> }[];
      }
    ).results;
  };

  it('creates a key shown once, lists it without the key, and keeps only its digest', async () => {
    const created = await createKey(t, owner, { name: 'SIEM poller' });
    expect(created.key).toMatch(/^dgk_[A-Za-z0-9_-]{43}$/);
    expect(created).toMatchObject({
      name: 'SIEM poller',
      scope: 'read',
      status: 'active',
      prefix: created.key.slice(0, 12),
      created_by: 'owner@acme.test',
      created_at: t.clock.now().toISOString(),
      expires_at: null,
      last_used_at: null,
      revoked_at: null,
    });

    const page = await list();
    expect(page).toMatchObject({ count: 1, next: null, previous: null });
    expect(page.results[0]).toEqual(Object.fromEntries(Object.entries(created).filter(([name]) => name !== 'key')));
    // A colleague sees the organization's keys; never the key itself.
    const seen = await get(LIST_PATH, colleague);
    expect(seen.json().results.map((k: ApiKeyBody) => k.id)).toEqual([created.id]);
    expect(seen.body).not.toContain(created.key.slice(12));
    expect((await list(stranger)).count).toBe(0);

    const raw = await readRawStore(t.location);
    expect(sourcesContaining(raw, created.key)).toEqual([]);
    expect(sourcesContaining(raw, created.key.slice(12))).toEqual([]);
    expect(sourcesContaining(raw, t.container.keys.digest(created.key)).length).toBeGreaterThan(0);
  });

  it('validates the body naming the field: name, scope, expires_at; names are unique among unrevoked keys', async () => {
    const bad = async (body: unknown, field: string) => {
      const error = expectError(await t.request({ method: 'POST', url: CREATE_PATH, token: owner, body }), 400);
      expect(error.fields?.map((f) => f.field)).toContain(field);
    };
    await bad({ name: '' }, 'name');
    await bad({ name: 'x'.repeat(256) }, 'name');
    await bad({ name: 'a', scope: 'admin' }, 'scope');
    await bad({ name: 'a', expires_at: 'tomorrow' }, 'expires_at');
    await bad({ name: 'a', expires_at: '2026-03-10T08:00:00Z' }, 'expires_at');
    await createKey(t, owner, { name: 'dup' });
    expectError(
      await t.request({ method: 'POST', url: CREATE_PATH, token: owner, body: { name: 'dup' } }),
      409,
      'conflict',
    );
    // Another organization may use the same name.
    await createKey(t, stranger, { name: 'dup' });
  });

  it('authenticates as its creator in its organization, on every endpoint a token works', async () => {
    const { key } = await createKey(t, colleague, { name: 'colleague key' });
    const account = await get(ACCOUNT, key);
    expect(account.statusCode, account.body).toBe(200);
    expect(account.json()).toMatchObject({ email: 'colleague@acme.test' });
    const organization = await get('/service/organization/', key);
    expect(organization.json()).toMatchObject({ id: orgId, name: 'Acme' });
    // Its organization only: org_id of any other one is refused, its own accepted.
    const other = (await t.container.organizations.showByName('Other')).id;
    expectError(await get(`${ACCOUNT}?org_id=${other}`, key), 403, 'forbidden');
    expectError(await get(ACCOUNT, key, { 'x-org-id': String(other) }), 403, 'forbidden');
    expect((await get(`${ACCOUNT}?org_id=${orgId}`, key)).statusCode).toBe(200);
    // An unknown key, or one with a character changed, is a 401.
    expectError(await get(ACCOUNT, `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`), 401, 'unauthorized');
    expectError(await get(ACCOUNT, 'dgk_nothing'), 401, 'unauthorized');
  });

  it('read_write keys change data; read keys are refused naming the scope', async () => {
    const { key: readKey } = await createKey(t, owner, { name: 'reader' });
    const { key: writeKey } = await createKey(t, owner, { name: 'writer', scope: 'read_write' });
    const body = { email: 'ops@acme.test' };
    const url = '/service/alert_system_setting_create_recipient/';
    const refused = await t.request({ method: 'POST', url, token: readKey, body });
    const error = expectError(refused, 403, 'insufficient_scope');
    expect(error.required_scope).toBe('read_write');
    expect(error.message).toContain('read_write');
    expect(refused.headers['www-authenticate']).toContain('insufficient_scope');
    const made = await t.request({ method: 'POST', url, token: writeKey, body });
    expect(made.statusCode, made.body).toBe(201);
    const listed = await get('/service/alert_system_setting_get_recipient_list/', readKey);
    expect(listed.json().results.map((r: { email: string }) => r.email)).toContain('ops@acme.test');
  });

  it('names the key in the audit entries of what it does', async () => {
    const { id, key } = await createKey(t, owner, { name: 'provisioner', scope: 'read_write' });
    const made = await t.request({
      method: 'POST',
      url: '/service/alert_system_setting_create_webhook/',
      token: key,
      body: { name: 'SOAR', url: 'https://hooks.example.com/soar', headers: {} },
    });
    expect(made.statusCode, made.body).toBe(201);
    const [entry] = await auditEvents('webhook.created');
    expect(entry).toMatchObject({
      actor_email: 'owner@acme.test',
      details: { host: 'hooks.example.com', api_key_id: id, api_key: 'provisioner' },
    });
    // With a person's token the entry names no key.
    await t.request({
      method: 'POST',
      url: '/service/alert_system_setting_create_webhook/',
      token: owner,
      body: { name: 'SOAR 2', url: 'https://hooks.example.com/soar2', headers: {} },
    });
    expect((await auditEvents('webhook.created'))[0]!.details).toEqual({ host: 'hooks.example.com' });
  });

  it('a key cannot manage keys nor the account credentials: 403 session_required', async () => {
    const { id, key } = await createKey(t, owner, { name: 'powerful', scope: 'read_write' });
    expectError(
      await t.request({ method: 'POST', url: CREATE_PATH, token: key, body: { name: 'child' } }),
      403,
      'session_required',
    );
    expectError(await get(LIST_PATH, key), 403, 'session_required');
    expectError(await t.request({ method: 'POST', url: revokePath(id), token: key }), 403, 'session_required');
    const password = {
      password: 'correct horse battery staple',
      new_password: 'another long passphrase',
      confirm_new_password: 'another long passphrase',
    };
    expectError(
      await t.request({ method: 'POST', url: '/service/new_password/', token: key, body: password }),
      403,
      'session_required',
    );
    expectError(
      await t.request({
        method: 'POST',
        url: '/service/setup_2fa/',
        token: key,
        body: { password: password.password },
      }),
      403,
      'session_required',
    );
    expect((await get(ACCOUNT, key)).statusCode).toBe(200);
  });

  it('revokes at once, idempotently; another organization’s key is a 404', async () => {
    const { id, key } = await createKey(t, owner, { name: 'to revoke' });
    expect((await get(ACCOUNT, key)).statusCode).toBe(200);
    expectError(await t.request({ method: 'POST', url: revokePath(id), token: stranger }), 404, 'not_found');
    expect((await get(ACCOUNT, key)).statusCode).toBe(200);

    const revoked = await t.request({ method: 'POST', url: revokePath(id), token: colleague });
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect(revoked.json()).toMatchObject({
      id,
      status: 'revoked',
      revoked_at: t.clock.now().toISOString(),
      revoked_by: 'colleague@acme.test',
    });
    const error = expectError(await get(ACCOUNT, key), 401, 'unauthorized');
    expect(error.message).toMatch(/revoked/);

    t.clock.advance(1000);
    const again = await t.request({ method: 'POST', url: revokePath(id), token: owner });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(revoked.json());
    expectError(await t.request({ method: 'POST', url: revokePath(999_999), token: owner }), 404, 'not_found');
    // The name is free again once revoked.
    await createKey(t, owner, { name: 'to revoke' });
    const events = (await auditEvents('api_key.revoked')).filter((e) => e.target_id === id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ actor_email: 'colleague@acme.test', details: { scope: 'read' } });
  });

  it('an expired key is a 401 saying so', async () => {
    const expires = new Date(t.clock.now().getTime() + 3_600_000).toISOString();
    const { id, key } = await createKey(t, owner, { name: 'short-lived', expires_at: expires });
    expect((await get(ACCOUNT, key)).statusCode).toBe(200);
    t.clock.advance(3_600_000);
    const error = expectError(await get(ACCOUNT, key), 401, 'unauthorized');
    expect(error.message).toMatch(/expired/);
    expect((await list()).results.find((k) => k.id === id)).toMatchObject({ status: 'expired', expires_at: expires });
  });

  it('stops working while its creator is disabled', async () => {
    await t.createUser({ org: 'Acme', email: 'leaver@acme.test' });
    const { key } = await createKey(t, (await t.login('leaver@acme.test')).access, { name: 'leaver key' });
    expect((await get(ACCOUNT, key)).statusCode).toBe(200);
    await t.container.users.setActive('leaver@acme.test', false);
    expectError(await get(ACCOUNT, key), 401, 'unauthorized');
    await t.container.users.setActive('leaver@acme.test', true);
    expect((await get(ACCOUNT, key)).statusCode).toBe(200);
  });

  it("an MSSP user's key for a managed organization acts for it while the MSSP manages it", async () => {
    const orgs = t.container.organizations;
    await orgs.create('MSSP');
    const managed = (await orgs.create('Client', { managedBy: 'MSSP' })).id;
    await t.createUser({ org: 'MSSP', email: 'analyst@mssp.test' });
    const analyst = (await t.login('analyst@mssp.test')).access;
    const { key } = await createKey(t, analyst, { name: 'client feed' }, { 'x-org-id': String(managed) });
    expect((await get('/service/organization/', key)).json()).toMatchObject({ id: managed, name: 'Client' });
    expect((await list(analyst)).count).toBe(0);
    await orgs.update('Client', { managedBy: null });
    const error = expectError(await get('/service/organization/', key), 401, 'unauthorized');
    expect(error.message).toMatch(/no longer belongs/);
    await orgs.update('Client', { managedBy: 'MSSP' });
    expect((await get('/service/organization/', key)).statusCode).toBe(200);
  });

  it('records created and used in the audit log: use at most hourly per key, or from a new address', async () => {
    const { id, key, prefix } = await createKey(t, owner, { name: 'audited', scope: 'read_write' });
    const created = (await auditEvents('api_key.created')).filter((e) => e.target_id === id);
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({
      actor_email: 'owner@acme.test',
      details: { prefix, scope: 'read_write', expires_at: null },
    });
    expect(JSON.stringify(created)).not.toContain(key.slice(12));

    const used = async () => (await auditEvents('api_key.used')).filter((e) => e.target_id === id);
    const useFrom = (remoteAddress: string) =>
      t.app.inject({ method: 'GET', url: ACCOUNT, headers: { authorization: `Bearer ${key}` }, remoteAddress });
    const lastUsed = async () => (await list()).results.find((k) => k.id === id)!.last_used_at;

    expect((await useFrom('10.1.1.1')).statusCode).toBe(200);
    await waitFor('first use logged', async () => (await used()).length === 1);
    expect((await used())[0]).toMatchObject({ actor_email: 'owner@acme.test', ip_address: '10.1.1.1' });
    expect(await lastUsed()).toBe(t.clock.now().toISOString());

    // Within the minute nothing is written, whatever the address.
    const firstUse = t.clock.now().toISOString();
    t.clock.advance(30_000);
    await useFrom('10.2.2.2');
    t.clock.advance(31_000);
    // A minute later: last_used_at moves, and the same address within the hour is not logged.
    await useFrom('10.1.1.1');
    await waitFor('last_used_at moved', async () => (await lastUsed()) !== firstUse);
    expect(await lastUsed()).toBe(t.clock.now().toISOString());
    // A new address is (once the minute has passed again).
    t.clock.advance(61_000);
    await useFrom('10.2.2.2');
    await waitFor('use from a new address logged', async () => (await used()).length === 2);
    expect((await used())[0]).toMatchObject({ ip_address: '10.2.2.2' });
    // And an hour after the last logged use, the same address again.
    t.clock.advance(3_600_000);
    await useFrom('10.2.2.2');
    await waitFor('hourly use logged', async () => (await used()).length === 3);
  });
});

describe('API keys and rate limits', () => {
  it("counts a key's requests as its creator's against the rate limits", async () => {
    const t = await createTestApp();
    const { org_id: orgId } = await t.createUser({ org: 'Acme', email: 'owner@acme.test' });
    const owner = (await t.login('owner@acme.test')).access;
    const get = (url: string, token: string) => t.request({ method: 'GET', url, token });
    const { key } = await createKey(t, owner, { name: 'limited' });
    await t.container.limits.setOverride(orgId, serviceScope('messenger-channels'), 'day', 2);
    try {
      expect((await get('/service/messenger-channels/', owner)).statusCode).toBe(200);
      const byKey = await get('/service/messenger-channels/', key);
      expect(byKey.statusCode).toBe(200);
      expect(byKey.headers['x-ratelimit-remaining']).toBe('0');
      expectRateLimited(await get('/service/messenger-channels/', owner));
      expectRateLimited(await get('/service/messenger-channels/', key));
    } finally {
      await t.close();
    }
  });
});
