import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findSource } from '../../src/modules/sources/index.ts';
import { channel, message } from '../support/corpus.ts';
import { settingPath, type DeliveryAttemptView } from '../support/delivery-api.ts';
import { expectError, fieldsOf } from '../support/http.ts';
import {
  createDeliveryKit,
  createRulesApp,
  deliverPending,
  HOUR,
  messengerRule,
  payloadOf,
  requestsTo,
  rulePaths,
  rulesUser,
  sourceRule,
  tickAndDeliver,
  writeCorpus,
  type RulesApi,
  type RuleView,
} from '../support/rules-api.ts';
import {
  parseCef,
  startHecReceiver,
  startSyslogListener,
  type HecReceiver,
  type SyslogListener,
} from '../support/siem-receivers.ts';
import { testCertificate, type TestCertificate } from '../support/smtp-test-server.ts';
import type { TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';
import { waitFor } from '../support/wait.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

const TOKEN = '5e3b1f0c-8d6a-4c1e-9f7a-2b4d6e8f0a1c';
const T0 = Date.parse('2026-03-10T09:00:00Z');

interface SiemTargetView {
  id: number;
  name: string;
  kind: string;
  has_token: boolean;
  [field: string]: unknown;
}

/** The SIEM-target endpoints of one user. */
function siemApi(t: TestApp, api: RulesApi) {
  const call = (method: string, url: string, body?: unknown) => t.request({ method, url, token: api.token, body });
  return {
    create: (body: unknown) => call('POST', settingPath('create_siem_target'), body),
    async created(body: unknown): Promise<SiemTargetView> {
      const response = await call('POST', settingPath('create_siem_target'), body);
      expect(response.statusCode, response.body).toBe(201);
      return response.json();
    },
    list: () => call('GET', settingPath('get_siem_target_list')),
    update: (id: number, body: unknown) => call('PUT', settingPath('update_siem_target', id), body),
    remove: (id: number) => call('DELETE', settingPath('delete_siem_target', id)),
    test: (id: number) => call('POST', settingPath('test_siem_target', id)),
    async tested(id: number): Promise<DeliveryAttemptView> {
      const response = await call('POST', settingPath('test_siem_target', id));
      expect(response.statusCode, response.body).toBe(200);
      return response.json();
    },
  };
}

describe(`SIEM forwarding: Splunk HEC and syslog over TLS (${testEngine})`, () => {
  let cert: TestCertificate;
  let hec: HecReceiver;
  let syslog: SyslogListener;
  let receiver: WebhookReceiver;
  let t: TestApp;
  let alice: RulesApi;
  let bob: RulesApi;
  let siem: ReturnType<typeof siemApi>;

  const hecBody = (extra: Record<string, unknown> = {}) => ({
    name: 'Splunk',
    kind: 'splunk_hec',
    url: hec.url,
    token: TOKEN,
    index: 'dragnet',
    ca_pem: cert.cert,
    ...extra,
  });
  const syslogBody = (extra: Record<string, unknown> = {}) => ({
    name: 'SIEM syslog',
    kind: 'syslog',
    host: '127.0.0.1',
    port: syslog.port,
    ca_pem: cert.cert,
    ...extra,
  });

  beforeAll(async () => {
    cert = await testCertificate();
    [hec, syslog, receiver] = await Promise.all([
      startHecReceiver(cert, TOKEN),
      startSyslogListener(cert),
      startWebhookReceiver(),
    ]);
    t = await createRulesApp();
    alice = await rulesUser(t, 'Acme', 'alice@acme.test');
    bob = await rulesUser(t, 'Globex', 'bob@globex.test');
    siem = siemApi(t, alice);
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all([hec?.close(), syslog?.close(), receiver?.close()]);
  });

  it('keeps the HEC token write-only: never returned, sealed at rest, kept when an update omits it', async () => {
    const created = await siem.created(hecBody());
    expect(created).toMatchObject({
      kind: 'splunk_hec',
      url: hec.url,
      has_token: true,
      index: 'dragnet',
      verify_tls: true,
    });
    expect(created).not.toHaveProperty('token');
    const listed = await siem.list();
    expect(listed.statusCode).toBe(200);
    expect(listed.body).not.toContain(TOKEN);
    expect(JSON.stringify(created)).not.toContain(TOKEN);

    const row = await t.container.store.db
      .selectFrom('siem_targets')
      .selectAll()
      .where('id', '=', created.id)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(TOKEN);
    expect(t.container.sourceContext.keys.decryptSecret(row.token_sealed!)).toBe(TOKEN);

    const renamed = await siem.update(created.id, hecBody({ name: 'Splunk prod', token: undefined }));
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()).toMatchObject({ name: 'Splunk prod', has_token: true });
    expect((await siem.tested(created.id)).status).toBe('success');
    expect((await siem.remove(created.id)).statusCode).toBe(204);

    // The audit log has the changes, with the kind and host but never the token.
    const audit = await alice.get('/service/audit_log/');
    expect(audit.statusCode, audit.body).toBe(200);
    expect(audit.body).not.toContain(TOKEN);
    const events = (audit.json() as { results: { event: string; target_id: number; details: unknown }[] }).results
      .filter((entry) => entry.target_id === created.id)
      .map((entry) => [entry.event, entry.details]);
    expect(events).toEqual(
      expect.arrayContaining([
        ['siem_target.created', { kind: 'splunk_hec', host: new URL(hec.url).host }],
        ['siem_target.updated', { kind: 'splunk_hec', host: new URL(hec.url).host }],
        ['siem_target.deleted', {}],
      ]),
    );
  });

  it('gives a syslog target its defaults: port 6514, JSON, facility 13, APP-NAME dragnet, TLS verified', async () => {
    const created = await siem.created({ name: 'defaults', kind: 'syslog', host: 'siem.example.com' });
    expect(created).toMatchObject({
      host: 'siem.example.com',
      port: 6514,
      format: 'json',
      facility: 13,
      app_name: 'dragnet',
      verify_tls: true,
      url: null,
      has_token: false,
    });
    expect((await siem.remove(created.id)).statusCode).toBe(204);
  });

  it('refuses bad input with a 400 naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [hecBody({ url: undefined }), 'url'],
      [hecBody({ url: 'ftp://splunk.example.com/services/collector' }), 'url'],
      [hecBody({ url: 'not a url' }), 'url'],
      [hecBody({ url: 'https://user:pw@splunk.example.com/services/collector' }), 'url'],
      [hecBody({ token: undefined }), 'token'],
      [hecBody({ token: 'two words' }), 'token'],
      [hecBody({ index: 'bad\nindex' }), 'index'],
      [hecBody({ ca_pem: 'not a certificate' }), 'ca_pem'],
      [hecBody({ ca_pem: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----' }), 'ca_pem'],
      [syslogBody({ host: undefined }), 'host'],
      [syslogBody({ host: 'bad host' }), 'host'],
      [syslogBody({ port: 0 }), 'port'],
      [syslogBody({ facility: 24 }), 'facility'],
      [syslogBody({ format: 'xml' }), 'format'],
      [syslogBody({ app_name: 'two words' }), 'app_name'],
      [syslogBody({ name: '  ' }), 'name'],
      [{ ...syslogBody(), kind: 'kafka' }, 'kind'],
    ];
    for (const [body, field] of cases) {
      const error = expectError(await siem.create(body), 400);
      expect(fieldsOf(error).join(' '), `${JSON.stringify(body).slice(0, 120)}`).toContain(field);
    }
  });

  it("answers 404 for another organization's target, and a rule cannot name it", async () => {
    const target = await siem.created(syslogBody({ name: 'acme only' }));
    const bobs = siemApi(t, bob);
    expectError(await bobs.update(target.id, syslogBody()), 404);
    expectError(await bobs.remove(target.id), 404);
    expectError(await bobs.test(target.id), 404);
    expect((await bobs.list()).json()).toMatchObject({ count: 0 });
    const kit = await createDeliveryKit(bob, { tag: 'globex-iso', receiver });
    const refused = expectError(
      await bob.create(messengerRule(kit, 'Globex', 'globex.com', { recipients: [], siem_targets: [target.id] })),
      400,
    );
    expect(fieldsOf(refused)).toContain('siem_targets');
    expect((await siem.remove(target.id)).statusCode).toBe(204);
  });

  it('sends a test event to HEC with the Splunk token and records the attempt', async () => {
    const target = await siem.created(hecBody({ sourcetype: 'dragnet:hit', source: 'dragnet-test' }));
    const before = hec.requests.length;
    const attempt = await siem.tested(target.id);
    expect(attempt).toMatchObject({ channel: 'splunk_hec', target: hec.url, status: 'success', status_code: 200 });
    const request = hec.requests[before]!;
    expect(request.authorization).toBe(`Splunk ${TOKEN}`);
    expect(request.contentType).toBe('application/json');
    expect(request.events).toHaveLength(1);
    expect(request.events[0]).toMatchObject({
      host: expect.any(String),
      source: 'dragnet-test',
      sourcetype: 'dragnet:hit',
      index: 'dragnet',
      event: { product: 'Dragnet', rule_name: 'Test notification' },
    });
    expect(request.events[0]!.time).toBeCloseTo(t.clock.now().getTime() / 1000, 3);
    expect((await siem.remove(target.id)).statusCode).toBe(204);
  });

  it("records HEC's refusals as failed attempts: a non-2xx answer, a code other than 0, a wrong token", async () => {
    const target = await siem.created(hecBody({ name: 'failing' }));
    let invalid: DeliveryAttemptView;
    try {
      hec.answer({ status: 503, body: '{"text":"Server is busy","code":9}' });
      const busy = await siem.tested(target.id);
      expect(busy).toMatchObject({ status: 'failed', status_code: 503 });
      expect(busy.error).toContain('Server is busy');
      hec.answer({ status: 200, body: '{"text":"Invalid data format","code":6}' });
      invalid = await siem.tested(target.id);
      expect(invalid).toMatchObject({ status: 'failed', status_code: 200 });
      expect(invalid.error).toContain('code 6');
    } finally {
      hec.answer('success');
    }
    expect((await siem.update(target.id, hecBody({ name: 'failing', token: 'wrong-token' }))).statusCode).toBe(200);
    const unauthorized = await siem.tested(target.id);
    expect(unauthorized).toMatchObject({ status: 'failed', status_code: 401 });
    expect(unauthorized.error).toContain('Invalid token');

    const failed = await alice.delivery.attempts({ channel: 'splunk_hec', status: 'failed' });
    expect(failed.results.slice(0, 3).map((a) => a.error)).toEqual([
      unauthorized.error,
      invalid.error,
      expect.stringContaining('503'),
    ]);
    expect((await siem.remove(target.id)).statusCode).toBe(204);
  });

  it('refuses a certificate it cannot verify unless told not to verify, or given the CA', async () => {
    const untrusted = await siem.created(syslogBody({ name: 'no ca', ca_pem: null }));
    const refused = await siem.tested(untrusted.id);
    expect(refused.status).toBe('failed');
    expect(refused.error).toMatch(/certificate/i);
    const unverified = await siem.update(untrusted.id, syslogBody({ name: 'no ca', ca_pem: null, verify_tls: false }));
    expect(unverified.json()).toMatchObject({ verify_tls: false });
    expect((await siem.tested(untrusted.id)).status).toBe('success');
    expect((await siem.remove(untrusted.id)).statusCode).toBe(204);
  });

  it('gives up on a syslog receiver that never completes the TLS handshake, within the delivery timeout', async () => {
    const silent = createNetServer((socket) => socket.on('error', () => undefined));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const port = (silent.address() as AddressInfo).port;
      const target = await siem.created(syslogBody({ name: 'silent', port }));
      const attempt = await siem.tested(target.id);
      expect(attempt).toMatchObject({ status: 'failed', error: 'timed out after 5000 ms' });
      expect(attempt.duration_ms).toBeGreaterThanOrEqual(4900);
      expect((await siem.remove(target.id)).statusCode).toBe(204);
    } finally {
      silent.close();
    }
  });

  it('sends a test event over syslog TLS as an octet-counted RFC 5424 message with a JSON body', async () => {
    const target = await siem.created(syslogBody({ app_name: 'dragnet-test', facility: 10 }));
    const before = syslog.messages.length;
    const attempt = await siem.tested(target.id);
    expect(attempt).toMatchObject({
      channel: 'syslog',
      target: `syslog-tls://127.0.0.1:${syslog.port}`,
      status: 'success',
      status_code: null,
    });
    const [received] = (await waitFor('the syslog message', () =>
      syslog.messages.length > before ? syslog.messages.slice(before) : null,
    ))!;
    expect(received).toMatchObject({ pri: 10 * 8 + 4, version: '1', appName: 'dragnet-test', msgId: 'hit' });
    expect(received!.timestamp).toBe(t.clock.now().toISOString());
    expect(received!.procId).toMatch(/^\d+$/);
    expect(JSON.parse(received!.msg)).toMatchObject({
      product: 'Dragnet',
      type: 'hit',
      rule_name: 'Test notification',
    });
    expect(syslog.malformed).toEqual([]);
    expect((await siem.remove(target.id)).statusCode).toBe(204);
  });

  it("delivers a rule's new hits to its webhook, its HEC target and its CEF syslog target, escaping CEF", async () => {
    const kit = await createDeliveryKit(alice, { tag: 'acme', receiver });
    const hecTarget = await siem.created(hecBody({ name: 'rule hec' }));
    const cefTarget = await siem.created(syslogBody({ name: 'rule cef', format: 'cef' }));
    const ruleName = 'Acme|leaks \\ watch';
    const rule = (await alice.created(
      messengerRule(kit, ruleName, 'acme-bank.com', { recipients: [], siem_targets: [cefTarget.id, hecTarget.id] }),
    )) as RuleView & { siem_targets: number[] };
    expect(rule.siem_targets).toEqual([hecTarget.id, cefTarget.id].sort((a, b) => a - b));
    expect(
      (await alice.getJson<{ siem_targets: number[] }>(`/service/alert_system_alert_get_alert_rule/${rule.id}/`))
        .siem_targets,
    ).toHaveLength(2);

    const text = 'acme-bank.com dump | user=admin \\ C:\\leak\nsecond line';
    await writeCorpus(t, [
      channel('bank_leaks', [
        message(1, text, { date: T0 + HOUR }),
        message(2, 'acme-bank.com again', { date: T0 + 2 * HOUR }),
      ]),
    ]);
    const hecBefore = hec.events().length;
    const syslogBefore = syslog.messages.length;
    const result = await tickAndDeliver(t, new Date(T0 + 24 * HOUR));
    expect(result.notifications).toBe(2);

    const [hook] = requestsTo(receiver, kit);
    expect(payloadOf(hook!).alert_rule_name).toBe(ruleName);
    const events = hec.events().slice(hecBefore);
    expect(events).toHaveLength(2);
    const bodies = events.map((e) => e.event as Record<string, unknown>);
    expect(bodies.map((b) => b.rule_name)).toEqual([ruleName, ruleName]);
    expect(bodies[0]).toMatchObject({ org_name: 'Acme', rule_id: rule.id, source: expect.any(String) });
    expect(String(bodies[0]!.incident_link)).toMatch(/\/incidents\/\d+\?org=\d+$/);
    expect(JSON.stringify(bodies.map((b) => b.fields))).toContain('user=admin');

    const frames = (await waitFor('two CEF messages', () =>
      syslog.messages.length >= syslogBefore + 2 ? syslog.messages.slice(syslogBefore) : null,
    ))!;
    expect(frames).toHaveLength(2);
    const withText = frames.find((f) => f.msg.includes('user\\=admin'))!;
    expect(withText.msg.startsWith('CEF:0|Dragnet|Dragnet|')).toBe(true);
    expect(withText.msg).toContain('Acme\\|leaks \\\\ watch');
    expect(withText.msg).not.toContain('\n');
    const cef = parseCef(withText.msg);
    expect(cef.header).toHaveLength(7);
    expect(cef.header[5]).toBe(`New ${String(bodies[0]!.source)} hit for rule ${ruleName}`);
    expect(cef.extension.cs2).toBe(ruleName);
    expect(cef.extension.cn2).toBe(String(rule.id));
    expect(JSON.stringify(JSON.parse(cef.extension.cs6!))).toContain('user=admin');
    expect(JSON.parse(cef.extension.cs6!)).toEqual(
      bodies.find((b) => JSON.stringify(b).includes('user=admin'))!.fields,
    );
    expect(cef.extension.cs3).toBe(bodies[0]!.incident_link);

    const attempts = await alice.delivery.attempts({ rule_id: rule.id });
    expect(attempts.results.map((a) => [a.channel, a.status]).sort()).toEqual([
      ['splunk_hec', 'success'],
      ['syslog', 'success'],
      ['webhook', 'success'],
    ]);

    // A delivery resource cannot be deleted while a rule references it.
    expectError(await siem.remove(hecTarget.id), 409);
    expect((await alice.remove(rule.id)).statusCode).toBe(200);
    expect((await siem.remove(hecTarget.id)).statusCode).toBe(204);
    // Restored, the rule gets back the targets that still exist.
    const restored = await alice.restore(rule.id);
    expect(restored.statusCode, restored.body).toBe(200);
    expect(restored.json()).toMatchObject({ siem_targets: [cefTarget.id] });
    expectError(await siem.remove(cefTarget.id), 409);
    expect((await alice.remove(rule.id)).statusCode).toBe(200);
    expect((await siem.remove(cefTarget.id)).statusCode).toBe(204);
  });

  it('sends a leaked credential as the hits endpoint shows it: the password masked, never in clear', async () => {
    const catalog = await alice.getJson<
      { id: number; name: string; args_schema: { params: { name: string; required: boolean; example?: unknown }[] } }[]
    >(rulePaths.catalog);
    const row = catalog.find((entry) => entry.name === 'filtered_leak')!;
    await findSource(row.id)!.demo!(t.container.sourceContext, t.clock.now().getTime());
    const args = Object.fromEntries(row.args_schema.params.filter((p) => p.required).map((p) => [p.name, p.example]));
    const kit = await createDeliveryKit(alice, { tag: 'leaks', receiver });
    const target = await siem.created(hecBody({ name: 'leak hec' }));
    const before = hec.events().length;
    const rule = await alice.created({
      ...sourceRule(kit, 'Acme credentials', row.id, args),
      recipients: [],
      siem_targets: [target.id],
    });
    await deliverPending(t);
    const events = hec.events().slice(before);
    expect(events.length).toBeGreaterThan(0);
    const [hit] = (await alice.hits((await alice.matches(rule.id)).results[0]!.id)).results;
    const sent = events.map((e) => e.event as { fields: Record<string, unknown>; hit_key: string });
    const text = JSON.stringify(sent);
    for (const clear of ['Autumn2026!', 'Acme#Admin77']) expect(text).not.toContain(clear);
    expect(text).not.toContain('password_sealed');
    const { id: _id, is_excluded: _excluded, ...shown } = hit!;
    expect(shown.password).toEqual(expect.any(String));
    expect(sent.map((e) => e.fields)).toContainEqual(expect.objectContaining({ password: shown.password }));
    expect((await alice.remove(rule.id)).statusCode).toBe(200);
    expect((await siem.remove(target.id)).statusCode).toBe(204);
  });
});

describe(`SIEM forwarding: the outbound guard (${testEngine})`, () => {
  let cert: TestCertificate;
  let hec: HecReceiver;
  let syslog: SyslogListener;
  let t: TestApp;

  beforeAll(async () => {
    cert = await testCertificate();
    [hec, syslog] = await Promise.all([startHecReceiver(cert, TOKEN), startSyslogListener(cert)]);
    t = await createRulesApp({
      env: { DRAGNET_OUTBOUND_ALLOW_HOSTS: '', DRAGNET_WEBHOOK_ALLOW_HOSTS: '', DRAGNET_WEBHOOK_TIMEOUT_MS: '2000' },
    });
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all([hec?.close(), syslog?.close()]);
  });

  it('refuses loopback, private and metadata targets without an allow-list: nothing is sent', async () => {
    const siem = siemApi(t, await rulesUser(t, 'Acme', 'alice@acme.test'));
    const targets = [
      { name: 'hec loopback', kind: 'splunk_hec', url: hec.url, token: TOKEN, ca_pem: cert.cert },
      {
        name: 'hec localhost',
        kind: 'splunk_hec',
        url: `https://localhost:${hec.port}/services/collector/event`,
        token: TOKEN,
      },
      { name: 'hec metadata', kind: 'splunk_hec', url: 'http://169.254.169.254/services/collector', token: TOKEN },
      { name: 'syslog loopback', kind: 'syslog', host: '127.0.0.1', port: syslog.port, ca_pem: cert.cert },
      { name: 'syslog localhost', kind: 'syslog', host: 'localhost', port: syslog.port },
      { name: 'syslog private', kind: 'syslog', host: '10.0.0.1' },
      { name: 'syslog v6 loopback', kind: 'syslog', host: '::1', port: syslog.port },
    ];
    for (const body of targets) {
      const target = await siem.created(body);
      const attempt = await siem.tested(target.id);
      expect(attempt.status, body.name).toBe('failed');
      expect(attempt.error, body.name).toMatch(/^refused/);
      expect((await siem.remove(target.id)).statusCode).toBe(204);
    }
    expect(hec.requests).toHaveLength(0);
    expect(syslog.messages).toHaveLength(0);
  });
});
