import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS, systemClock, type ManualClock } from '../src/lib/clock.ts';
import { channel, message } from './support/corpus.ts';
import { deliveryApi, templateBody, VALID_TEMPLATE_BODY, webhookBody } from './support/delivery-api.ts';
import { expectError, fieldsOf } from './support/http.ts';
import {
  createDeliveryKit,
  createRulesApp,
  HOUR,
  messengerRule,
  rulePaths,
  rulesApi,
  rulesUser,
  SMTP_AUTH,
  tickAndDeliver,
  withQuery,
  writeCorpus,
  type RulesApi,
} from './support/rules-api.ts';
import { startSmtpTestServer, type SmtpTestServer } from './support/smtp-test-server.ts';
import { createTestApp, type TestApp } from './support/test-app.ts';
import { testEngine } from './support/test-store.ts';

/**
 * Defects found by fuzzing (issue #15), each answered as bad input now: a 4xx with the error
 * body, never a 500.
 */

// One rules app for the suites below that need no settings or clock of their own: each works in
// an organization of its own, which isolates them as well as a store each, at a fraction of the time.
let shared: TestApp;
beforeAll(async () => {
  shared = await createRulesApp();
});
afterAll(async () => {
  await shared?.close();
});
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

  it.each([
    '__proto__',
    'constructor',
    'toString',
    'hasOwnProperty',
    '__proto__ AND constructor',
    '"__proto__" OR valueOf',
  ])('a search for %s is an ordinary search, not a 500', async (query) => {
    const response = await t.request({
      method: 'POST',
      url: '/service/messenger-search-create/',
      token: access,
      body: { query },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ total: 0 });
  });

  const nested = (depth: number, open: string, close: string, inner = '1') =>
    open.repeat(depth) + inner + close.repeat(depth);

  it.each([
    ['POST', '/token/', nested(100_000, '{"a":', '}')],
    ['POST', '/token/', nested(200_000, '[', ']')],
    ['POST', '/token/refresh/', `{"refresh":${nested(100_000, '[', ']')}}`],
    ['POST', '/service/verify_2fa_enrollment/', `{"otp":${nested(100_000, '{"a":', '}')}}`],
    ['POST', '/service/messenger-search-create/', `{"query":"acme","channel_ids":${nested(50_000, '[', ']')}}`],
    ['DELETE', '/service/alert_system_alert_delete_alert_rule/1/', nested(100_000, '[', ']')],
  ])('%s %s with a body nested far too deep is a 400', async (method, url, payload) => {
    const response = await t.app.inject({
      method: method as 'POST',
      url,
      payload,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${access}` },
    });
    const body = expectError(response, 400, 'bad_request');
    expect(body.message).toContain('nests deeper than 64 levels');
  });

  it('brackets inside strings do not count as nesting', async () => {
    const response = await t.request({
      method: 'POST',
      url: '/service/messenger-search-create/',
      token: access,
      body: { query: `"${'['.repeat(500)}"` },
    });
    expect(response.statusCode, response.body).toBe(200);
  });
});

describe(`small defects of #15 (${testEngine})`, () => {
  let t: TestApp;
  let access: string;
  let refresh: string;
  let orgId: number;
  let userId: number;

  beforeAll(async () => {
    // The real clock: created_at and updated_at are two readings of it unless taken once.
    t = await createTestApp({ env: { DRAGNET_RATE_LIMITS: 'off' }, clock: systemClock as ManualClock });
    ({ org_id: orgId, id: userId } = await t.createUser({ org: 'Defects', email: 'd@defects.test' }));
    ({ access, refresh } = await t.login('d@defects.test'));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a new webhook and a new template have updated_at equal to created_at', async () => {
    const delivery = deliveryApi(t, access, orgId);
    type Stamped = { created_at: string; updated_at: string };
    for (const created of [
      await delivery.created<Stamped>('webhook', webhookBody('hook')),
      await delivery.created<Stamped>('template', templateBody('tpl')),
    ]) {
      expect(created.updated_at).toBe(created.created_at);
    }
  });

  it('a new rule, created and run at once, has updated_at equal to created_at', async () => {
    const api = rulesApi(t, access, orgId, userId);
    const rule = await api.created(
      messengerRule(await createDeliveryKit(api, { tag: 'stamps' }), 'Stamped', 'stamp-bank.com'),
    );
    expect(rule.last_run).not.toBeNull();
    expect(rule.updated_at).toBe(rule.created_at);
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
  beforeAll(() => {
    t = shared;
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

describe(`names from requests and data are never looked up as object members (${testEngine})`, () => {
  let t: TestApp;
  let smtp: SmtpTestServer;
  let alice: RulesApi;

  beforeAll(async () => {
    smtp = await startSmtpTestServer({ auth: SMTP_AUTH });
    t = shared;
    alice = await rulesUser(t, 'Prototypes', 'alice@prototypes.test');
    await t.createUser({ org: 'Operators', email: 'ops@prototypes.test', role: 'system' });
  });
  afterAll(async () => {
    await smtp?.close();
  });

  it('a template with {__proto__}, {constructor} and {toString} keeps them as text in the email it sends', async () => {
    const kit = await createDeliveryKit(alice, { tag: 'proto', smtp });
    const hostile = '{__proto__} {constructor} {toString} {hasOwnProperty}';
    const template = await alice.delivery.created<{ subject: string; body: string }>(
      'template',
      templateBody('prototype names', {
        subject: `Alert {alert_rule_name} ${hostile}`,
        body: `${VALID_TEMPLATE_BODY}<p>${hostile}</p>`,
      }),
    );
    expect(template.body).toContain(hostile);
    // A body with only such names lacks every real placeholder: a 400 naming them, not a 500.
    const invalid = expectError(
      await alice.delivery.create('template', templateBody('only prototypes', { body: hostile })),
      400,
      'validation_failed',
    );
    expect(invalid.missing_placeholders).toHaveLength(5);

    const rule = await alice.created(
      messengerRule({ ...kit, template: { id: template.id } }, 'Proto watch', 'proto-bank.com'),
    );
    await writeCorpus(t, [
      channel('proto_leaks', [message(1, 'proto-bank.com combo', { date: t.clock.now().getTime() + HOUR })]),
    ]);
    t.clock.advance(DAY_MS);
    await tickAndDeliver(t);
    await alice.relogin();
    const [mail] = await smtp.waitForMessages(1);
    expect(mail!.parsed.subject).toBe(`Alert Proto watch ${hostile}`);
    expect(mail!.parsed.html).toContain(hostile);
    expect((await alice.matches(rule.id)).count).toBe(1);
  });

  it('filters and sorts naming __proto__ or constructor are a 400 naming the parameter', async () => {
    const kit = await createDeliveryKit(alice, { tag: 'filters' });
    const rule = await alice.created(messengerRule(kit, 'Filter watch', 'filter-bank.com'));
    await writeCorpus(t, [
      channel('filter_leaks', [message(1, 'filter-bank.com combo', { date: t.clock.now().getTime() + HOUR })]),
    ]);
    t.clock.advance(DAY_MS);
    await tickAndDeliver(t);
    await alice.relogin();
    const [match] = (await alice.matches(rule.id)).results;
    for (const filter of ['__proto__:x', 'constructor:function', 'toString:', 'hasOwnProperty:1']) {
      const body = expectError(
        await alice.get(withQuery(rulePaths.hits(match!.id), { filter })),
        400,
        'validation_failed',
      );
      expect(fieldsOf(body)).toEqual(['filter']);
    }
    for (const sort of ['__proto__', '-constructor', 'valueOf']) {
      expect(
        fieldsOf(
          expectError(await alice.get(withQuery(rulePaths.hits(match!.id), { sort })), 400, 'validation_failed'),
        ),
      ).toEqual(['sort']);
    }
    // An exclusion on a field named like a prototype member is refused the same way.
    const exclusion = expectError(
      await alice.createExclusion(rule.id, { field: 'constructor', value: 'x' }),
      400,
      'validation_failed',
    );
    expect(fieldsOf(exclusion)).toEqual(['field']);
    // Real fields still work, with values that are prototype names.
    const filtered = await alice.hits(match!.id, { filter: 'channel_username:__proto__' });
    expect(filtered.count).toBe(0);
  });

  it('a bucket listing whose root element is <constructor> is refused as not a listing', async () => {
    const { access } = await t.login('ops@prototypes.test');
    const response = await t.app.inject({
      method: 'POST',
      url: '/ingest/cloud_bucket/?name=listing.xml',
      payload: '<?xml version="1.0"?><constructor><Name>b</Name></constructor>',
      headers: { authorization: `Bearer ${access}`, 'content-type': 'application/xml' },
    });
    expect(response.statusCode, response.body).toBeLessThan(500);
    expect(response.body).toContain('root element constructor');
  });
});

describe(`ids and the organization selector are checked before any SQL (${testEngine})`, () => {
  let t: TestApp;
  let alice: RulesApi;
  let ruleId: number;

  beforeAll(async () => {
    t = shared;
    alice = await rulesUser(t, 'Selectors', 'alice@selectors.test');
    const kit = await createDeliveryKit(alice, { tag: 'ids' });
    ruleId = (await alice.created(messengerRule(kit, 'Id watch', 'id-bank.com'))).id;
  });

  const odd = [
    '0',
    '-1',
    '0x1',
    '1e0',
    '1.0',
    '%201',
    '1%20',
    '%2B1',
    'abc',
    'true',
    '9007199254740992',
    '99999999999999999999',
    '18446744073709551616',
  ];

  it.each(odd)('a path id %s is a 400 naming id on update, exclusion and hit routes', async (id) => {
    const rule = { name: 'x', service: 1, args: { query: 'x' }, email_template: 1 };
    for (const response of [
      await t.request({ method: 'PUT', url: rulePaths.update(id), token: alice.token, body: rule }),
      await t.request({
        method: 'POST',
        url: rulePaths.createExclusion(id),
        token: alice.token,
        body: { field: 'channel_username', value: 'x' },
      }),
      await alice.get(rulePaths.hits(id)),
      await t.request({
        method: 'DELETE',
        url: `/service/alert_system_setting_delete_template/${id}/`,
        token: alice.token,
      }),
    ]) {
      expect(fieldsOf(expectError(response, 400, 'validation_failed'))).toEqual(['id']);
    }
  });

  it.each(['0', '0x1', '1e0', '1.0', ' 1', 'abc', '9007199254740992', '99999999999999999999'])(
    'an organization selector %j is a 400 naming org_id',
    async (orgId) => {
      const exclusion = { field: 'channel_username', value: 'x' };
      const viaQuery = await t.request({
        method: 'POST',
        url: `${rulePaths.createExclusion(ruleId)}?org_id=${encodeURIComponent(orgId)}`,
        token: alice.token,
        body: exclusion,
      });
      const viaHeader = await t.request({
        method: 'POST',
        url: rulePaths.createExclusion(ruleId),
        token: alice.token,
        body: exclusion,
        headers: { 'x-org-id': orgId },
      });
      for (const response of [viaQuery, viaHeader])
        expect(fieldsOf(expectError(response, 400, 'validation_failed'))).toEqual(['org_id']);
    },
  );

  it('an empty organization selector is the same as none', async () => {
    const created = await t.request({
      method: 'POST',
      url: `${rulePaths.createExclusion(ruleId)}?org_id=`,
      token: alice.token,
      body: { field: 'channel_username', value: 'empty' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const viaHeader = await t.request({
      method: 'POST',
      url: rulePaths.createExclusion(ruleId),
      token: alice.token,
      body: { field: 'channel_username', value: 'blank' },
      headers: { 'x-org-id': '' },
    });
    expect(viaHeader.statusCode, viaHeader.body).toBe(201);
  });

  it('query integers take decimal digits only as well', async () => {
    for (const page of ['1e0', '0x1', '1.0']) {
      expect(
        fieldsOf(expectError(await alice.get(withQuery(rulePaths.list, { page })), 400, 'validation_failed')),
      ).toEqual(['page']);
    }
    expect((await alice.get(withQuery(rulePaths.list, { page: '1' }))).statusCode).toBe(200);
  });
});
