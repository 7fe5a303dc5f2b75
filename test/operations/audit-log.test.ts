import type { Static } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditEntry as AuditEntrySchema } from '../../src/modules/audit/audit.schemas.ts';
import { runCli } from '../support/cli.ts';
import {
  deliveryApi,
  NO_RATE_LIMITS,
  relative,
  senderBody,
  webhookBody,
  type ListPage,
} from '../support/delivery-api.ts';
import { expectError, fieldsOf } from '../support/http.ts';
import { createTestApp, DEFAULT_PASSWORD, type TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';
import { createDeliveryKit, messengerRule, rulesUser } from '../support/rules-api.ts';
import { totpCode, wrongCode } from '../support/totp.ts';
import { scaled } from '../support/wait.ts';

/**
 * The audit log (docs/api.md "Audit log") through HTTP and the CLI, on a real store: which
 * security events are recorded, in which organization, with what (and never with a secret).
 */

type AuditEntry = Static<typeof AuditEntrySchema>;

const AUDIT = '/service/audit_log/';
const SENDER_PASSWORD = 'smtp-password-never-logged';

describe(`audit log (${testEngine})`, () => {
  let t: TestApp;
  const ids: Record<string, { id: number; org_id: number }> = {};

  const read = async (token: string, query = ''): Promise<ListPage<AuditEntry>> => {
    const response = await t.request({ method: 'GET', url: `${AUDIT}${query}`, token });
    expect(response.statusCode, response.body).toBe(200);
    return response.json();
  };
  const events = async (token: string, query = '') => (await read(token, query)).results.map((entry) => entry.event);

  beforeAll(async () => {
    t = await createTestApp({ env: NO_RATE_LIMITS });
    ids.acme = await t.createUser({ org: 'Acme', email: 'alice@acme.example' });
    ids.acmeOther = await t.createUser({ org: 'Acme', email: 'bob@acme.example' });
    ids.globex = await t.createUser({ org: 'Globex', email: 'gina@globex.example' });
    await t.container.organizations.create('MSSP Inc', {});
    await t.container.organizations.update('Acme', { managedBy: 'MSSP Inc' });
    ids.mssp = await t.createUser({ org: 'MSSP Inc', email: 'ops@mssp.example' });
  });
  afterAll(() => t.close());

  it('records logins and failed logins in the user’s organization, never an unknown email', async () => {
    const failed = await t.request({
      method: 'POST',
      url: '/token/',
      body: { email: 'bob@acme.example', password: 'not the password at all' },
    });
    expectError(failed, 401, 'invalid_credentials');
    expectError(
      await t.request({
        method: 'POST',
        url: '/token/',
        body: { email: 'nobody@acme.example', password: 'whatever it is' },
      }),
      401,
    );
    const { access } = await t.login('alice@acme.example');

    const page = await read(access, '?event=login.failed');
    expect(page.count).toBe(1);
    expect(page.results[0]).toMatchObject({
      event: 'login.failed',
      actor_user_id: null,
      actor_email: null,
      target_type: 'user',
      target_id: ids.acmeOther!.id,
      target_name: 'bob@acme.example',
      via: 'api',
      ip_address: '127.0.0.1',
      details: { reason: 'password' },
    });
    const [login] = (await read(access, '?event=login.succeeded')).results;
    expect(login).toMatchObject({
      actor_user_id: ids.acme!.id,
      actor_email: 'alice@acme.example',
      target_id: ids.acme!.id,
    });
    expect(JSON.stringify(await read(access))).not.toContain('nobody@acme.example');
  });

  it('records 2FA enrolment, a failed second factor, a password change and the refused refresh that follows', async () => {
    const email = 'carol@acme.example';
    await t.createUser({ org: 'Acme', email });
    const first = await t.login(email);
    const seed = (
      await t.request({
        method: 'POST',
        url: '/service/setup_2fa/',
        token: first.access,
        body: { password: DEFAULT_PASSWORD },
      })
    ).json().seed as string;
    const enrolled = await t.request({
      method: 'POST',
      url: '/service/verify_2fa_enrollment/',
      token: first.access,
      body: { otp: totpCode(seed, t.clock.now()) },
    });
    expect(enrolled.statusCode, enrolled.body).toBe(200);
    t.clock.advance(60_000);
    expectError(
      await t.request({ method: 'POST', url: '/token/', body: { email, password: DEFAULT_PASSWORD, otp: '000000' } }),
      401,
      'invalid_otp',
    );
    const pair = await t.login(email, DEFAULT_PASSWORD, totpCode(seed, t.clock.now()));

    const changed = await t.request({
      method: 'POST',
      url: '/service/new_password/',
      token: pair.access,
      body: {
        password: DEFAULT_PASSWORD,
        new_password: 'a brand new passphrase',
        confirm_new_password: 'a brand new passphrase',
      },
    });
    expect(changed.statusCode, changed.body).toBe(200);
    expectError(
      await t.request({ method: 'POST', url: '/token/refresh/', body: { refresh: pair.refresh } }),
      401,
      'unauthorized',
    );

    const mine = (await read(changed.json().access)).results.filter((entry) => entry.target_name === email);
    expect(mine.map((entry) => [entry.event, entry.details.reason ?? null])).toEqual([
      ['token.refresh_refused', 'revoked'],
      ['password.changed', null],
      ['login.succeeded', null],
      ['login.failed', 'otp'],
      ['two_factor.enabled', null],
      ['login.succeeded', null],
    ]);
    expect(JSON.stringify(mine)).not.toContain(seed);
    expect(JSON.stringify(mine)).not.toContain('a brand new passphrase');
  });

  it('records failed password changes, failed 2FA checks, backup code use and renewal, and 2FA turned off by its user', async () => {
    const email = 'erin@acme.example';
    await t.createUser({ org: 'Acme', email });
    const post = async (url: string, token: string, body: object, status: number) => {
      const response = await t.request({ method: 'POST', url, token, body });
      expect(response.statusCode, response.body).toBe(status);
      return response.json();
    };
    const NEW = 'a brand new passphrase';
    const { access } = await t.login(email);
    await post(
      '/service/new_password/',
      access,
      { password: 'not the password at all', new_password: NEW, confirm_new_password: NEW },
      400,
    );
    await post(
      '/service/new_password/',
      access,
      { password: DEFAULT_PASSWORD, new_password: NEW, confirm_new_password: `${NEW}!` },
      400,
    );
    await post('/service/setup_2fa/', access, { password: 'not the password at all' }, 400);
    const { seed } = await post('/service/setup_2fa/', access, { password: DEFAULT_PASSWORD }, 200);
    await post('/service/verify_2fa_enrollment/', access, { otp: wrongCode(seed, t.clock.now()) }, 400);
    const enrolled = await post('/service/verify_2fa_enrollment/', access, { otp: totpCode(seed, t.clock.now()) }, 200);
    t.clock.advance(60_000);
    const signedIn = await t.login(email, DEFAULT_PASSWORD, enrolled.backup_codes[0]);
    const renewed = await post(
      '/service/new_backup_codes/',
      signedIn.access,
      { password: DEFAULT_PASSWORD, otp: totpCode(seed, t.clock.now()) },
      200,
    );
    await post('/service/disable_2fa/', signedIn.access, { password: DEFAULT_PASSWORD, otp: '000000' }, 400);
    await post(
      '/service/disable_2fa/',
      signedIn.access,
      { password: DEFAULT_PASSWORD, otp: renewed.backup_codes[0] },
      200,
    );

    const mine = (await read(enrolled.access, '?page_size=100')).results.filter((entry) => entry.target_name === email);
    expect(mine.map((entry) => [entry.event, entry.details])).toEqual([
      ['two_factor.disabled', {}],
      ['two_factor.backup_code_used', { during: 'disable' }],
      ['two_factor.verification_failed', { during: 'disable', reason: 'otp' }],
      ['two_factor.backup_codes_regenerated', {}],
      ['login.succeeded', {}],
      ['two_factor.backup_code_used', { during: 'login' }],
      ['two_factor.enabled', {}],
      ['two_factor.verification_failed', { during: 'enrollment', reason: 'otp' }],
      ['two_factor.verification_failed', { during: 'setup', reason: 'password' }],
      ['password.change_failed', { reason: 'confirm_new_password' }],
      ['password.change_failed', { reason: 'password' }],
      ['login.succeeded', {}],
    ]);
    // The user did all of it from their own session: they are the actor of every entry.
    expect(
      mine.every((entry) => entry.actor_email === email && entry.via === 'api' && entry.ip_address === '127.0.0.1'),
    ).toBe(true);
    const text = JSON.stringify(mine);
    for (const secret of [seed, NEW, DEFAULT_PASSWORD, ...enrolled.backup_codes, ...renewed.backup_codes])
      expect(text).not.toContain(secret);
  });

  it('records the deletion and the restoration of a rule, with its name and who did it', async () => {
    const api = await rulesUser(t, 'Initech', 'ian@initech.example');
    const kit = await createDeliveryKit(api, { tag: 'audit' });
    const rule = await api.created(messengerRule(kit, 'Leaked VPN logins', 'vpn.initech.example'));
    expect((await api.remove(rule.id)).statusCode).toBe(200);
    expect((await api.restore(rule.id)).statusCode).toBe(200);
    expectError(await api.restore(rule.id), 409, 'conflict');

    const page = await read(api.token, '?page_size=3');
    expect(
      page.results.map((entry) => [
        entry.event,
        entry.target_type,
        entry.target_id,
        entry.target_name,
        entry.actor_email,
      ]),
    ).toEqual([
      ['rule.restored', 'rule', rule.id, 'Leaked VPN logins', 'ian@initech.example'],
      ['rule.deleted', 'rule', rule.id, 'Leaked VPN logins', 'ian@initech.example'],
      ['login.succeeded', 'user', api.userId, 'ian@initech.example', 'ian@initech.example'],
    ]);
    expect(page.results[0]!.details).toEqual({ service_id: 1 });
  });

  it('records sender and webhook changes with names and hosts, never credentials, secrets or webhook paths', async () => {
    const { access } = await t.login('gina@globex.example');
    const api = deliveryApi(t, access, ids.globex!.org_id);
    const sender = await api.created('sender', senderBody('alerts@globex.example', { password: SENDER_PASSWORD }));
    expect((await api.remove('sender', sender.id)).statusCode).toBe(204);
    const webhook = await api.created<{ secret: string }>(
      'webhook',
      webhookBody('Ops channel', { url: 'https://hooks.slack.com/services/T000/B000/very-secret-path' }),
    );
    const moved = await api.update(
      'webhook',
      webhook.id,
      webhookBody('Ops channel', { url: 'https://outlook.webhook.office.com/webhookb2/another-secret-path' }),
    );
    expect(moved.statusCode, moved.body).toBe(200);
    expect((await api.remove('webhook', webhook.id)).statusCode).toBe(204);

    const page = await read(access, '?page_size=5');
    expect(page.results.map((entry) => [entry.event, entry.target_type, entry.target_id])).toEqual([
      ['webhook.deleted', 'webhook', webhook.id],
      ['webhook.updated', 'webhook', webhook.id],
      ['webhook.created', 'webhook', webhook.id],
      ['sender.deleted', 'sender', sender.id],
      ['sender.created', 'sender', sender.id],
    ]);
    expect(page.results[0]).toMatchObject({ target_name: null, details: {} });
    expect(page.results[1]).toMatchObject({ details: { host: 'outlook.webhook.office.com' } });
    expect(page.results[2]).toMatchObject({
      actor_email: 'gina@globex.example',
      target_name: 'Ops channel',
      details: { host: 'hooks.slack.com' },
    });
    expect(page.results[4]).toMatchObject({
      target_name: 'alerts@globex.example',
      details: { server_host: 'smtp.example.com', authentication_required: true },
    });
    const text = JSON.stringify(page);
    for (const secret of [SENDER_PASSWORD, 'mailer', webhook.secret, 'very-secret-path', 'another-secret-path'])
      expect(text).not.toContain(secret);
  });

  it('shows an organization only its own events; an MSSP acting for a managed one writes and reads that one’s log', async () => {
    const globex = await t.login('gina@globex.example');
    const globexEntries = (await read(globex.access, '?page_size=100')).results;
    expect(globexEntries.length).toBeGreaterThan(0);
    expect(
      globexEntries.every((entry) => entry.actor_email === null || entry.actor_email === 'gina@globex.example'),
    ).toBe(true);
    expect(JSON.stringify(globexEntries)).not.toContain('acme.example');

    const mssp = await t.login('ops@mssp.example');
    const created = await t.request({
      method: 'POST',
      url: `/service/alert_system_setting_create_webhook/?org_id=${ids.acme!.org_id}`,
      token: mssp.access,
      body: webhookBody('MSSP hook'),
    });
    expect(created.statusCode, created.body).toBe(201);
    const [latest] = (await read(mssp.access, `?org_id=${ids.acme!.org_id}&page_size=1`)).results;
    expect(latest).toMatchObject({
      event: 'webhook.created',
      actor_email: 'ops@mssp.example',
      target_name: 'MSSP hook',
    });
    const alice = await t.login('alice@acme.example');
    expect((await events(alice.access, '?event=webhook.created')).length).toBe(1);
    // The MSSP's own log has its login, not the managed organization's webhook.
    expect(await events(mssp.access)).toEqual(['login.succeeded']);
    // A plain member cannot read another organization's log.
    expectError(
      await t.request({ method: 'GET', url: `${AUDIT}?org_id=${ids.acme!.org_id}`, token: globex.access }),
      403,
      'forbidden',
    );
  });

  it('pages newest first with links that keep the filter, and refuses unknown events naming the field', async () => {
    const { access } = await t.login('alice@acme.example');
    await t.login('alice@acme.example');
    const first = await read(access, '?event=login.succeeded&page_size=2');
    expect(first.count).toBeGreaterThanOrEqual(3);
    expect(first.previous).toBeNull();
    expect(first.next).toContain('event=login.succeeded');
    const second = await read(access, relative(first.next!).slice(AUDIT.length));
    expect(second.results.every((entry) => entry.event === 'login.succeeded')).toBe(true);
    const ids = [...first.results, ...second.results].map((entry) => entry.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));

    const bad = expectError(
      await t.request({ method: 'GET', url: `${AUDIT}?event=login.maybe`, token: access }),
      400,
      'validation_failed',
    );
    expect(fieldsOf(bad)).toEqual(['event']);
    expectError(await t.request({ method: 'GET', url: AUDIT }), 401, 'unauthorized');
  });

  it(
    'records an operator’s dragnet user disable, enable and disable-2fa as cli events, and what a disabled user then tries',
    async () => {
      const email = 'dave@acme.example';
      const cli = async (args: string[], input?: string) => {
        const result = await runCli(args, { env: t.location.env, input, timeoutMs: scaled(120_000) });
        expect(result.code, result.stderr).toBe(0);
      };
      await cli(['user', 'create', '--org', 'Acme', '--email', email, '--password-stdin'], DEFAULT_PASSWORD);
      const pair = await t.login(email);
      const seed = (
        await t.request({
          method: 'POST',
          url: '/service/setup_2fa/',
          token: pair.access,
          body: { password: DEFAULT_PASSWORD },
        })
      ).json().seed as string;
      await t.request({
        method: 'POST',
        url: '/service/verify_2fa_enrollment/',
        token: pair.access,
        body: { otp: totpCode(seed, t.clock.now()) },
      });

      await cli(['user', 'disable', email]);
      expectError(
        await t.request({ method: 'POST', url: '/token/', body: { email, password: DEFAULT_PASSWORD } }),
        401,
        'invalid_credentials',
      );
      expectError(await t.request({ method: 'POST', url: '/token/refresh/', body: { refresh: pair.refresh } }), 401);
      await cli(['user', 'enable', email]);
      await cli(['user', 'disable-2fa', email]);
      const after = await runCli(['user', 'disable-2fa', email], { env: t.location.env });
      expect(after.code, after.stderr).toBe(4);
      // 2FA is off: the password alone logs in again.
      await t.login(email);

      const { access } = await t.login('alice@acme.example');
      const daves = (await read(access, '?page_size=100')).results.filter((entry) => entry.target_name === email);
      expect(daves.map((entry) => [entry.event, entry.via, entry.details.reason ?? null])).toEqual([
        ['login.succeeded', 'api', null],
        ['two_factor.disabled', 'cli', null],
        ['user.enabled', 'cli', null],
        ['token.refresh_refused', 'api', 'account_disabled'],
        ['login.failed', 'api', 'account_disabled'],
        ['user.disabled', 'cli', null],
        ['two_factor.enabled', 'api', null],
        ['login.succeeded', 'api', null],
        ['user.created', 'cli', null],
      ]);
      for (const entry of daves.filter((e) => e.via === 'cli'))
        expect(entry).toMatchObject({ actor_user_id: null, actor_email: null, ip_address: null });
    },
    scaled(180_000),
  );
});

describe(`client addresses behind a reverse proxy (${testEngine})`, () => {
  it('DRAGNET_TRUST_PROXY=<proxy address> takes the address the proxy appended, not one the client wrote', async () => {
    const t = await createTestApp({ env: { DRAGNET_TRUST_PROXY: '127.0.0.1' } });
    try {
      await t.createUser({ org: 'Proxied', email: 'p@proxied.example' });
      // The client sent "X-Forwarded-For: 10.9.9.9" itself; nginx appended the address it saw.
      const failed = await t.app.inject({
        method: 'POST',
        url: '/token/',
        remoteAddress: '127.0.0.1',
        headers: { 'x-forwarded-for': '10.9.9.9, 198.51.100.23' },
        payload: { email: 'p@proxied.example', password: 'wrong password here' },
      });
      expect(failed.statusCode).toBe(401);
      // A request that did not come through the proxy: its header is not believed at all.
      await t.app.inject({
        method: 'POST',
        url: '/token/',
        remoteAddress: '203.0.113.50',
        headers: { 'x-forwarded-for': '10.9.9.9' },
        payload: { email: 'p@proxied.example', password: 'wrong password again' },
      });
      const { access } = await t.login('p@proxied.example');
      const entries = (await t.request({ method: 'GET', url: `${AUDIT}?event=login.failed`, token: access })).json()
        .results as AuditEntry[];
      expect(entries.map((entry) => entry.ip_address)).toEqual(['203.0.113.50', '198.51.100.23']);
    } finally {
      await t.close();
    }
  });

  it('refuses a DRAGNET_TRUST_PROXY that is neither true, false nor addresses', async () => {
    const result = await runCli(['migrate'], {
      env: { DRAGNET_TRUST_PROXY: 'nginx.local', DRAGNET_SECRET_KEY: 'a-key-that-is-long-enough-0123456789' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('DRAGNET_TRUST_PROXY must be true, false, or proxy addresses');
  });
});
