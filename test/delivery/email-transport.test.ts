import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryUser, NO_RATE_LIMITS, senderBody, type DeliveryApi } from '../support/delivery-api.ts';
import {
  startSilentServer,
  startSmtpTestServer,
  testCertificate,
  type SmtpTestServer,
} from '../support/smtp-test-server.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

const SMTP_USER = 'alerts-mailer';
const SMTP_PASS = 'Sm7p-pass-0f-the-sender-9c1e';

describe(`email delivery through a real SMTP server (${testEngine})`, () => {
  let t: TestApp;
  let alice: DeliveryApi;
  let other: DeliveryApi;
  /** Offers STARTTLS with a self-signed certificate; AUTH only after TLS. */
  let starttlsServer: SmtpTestServer;
  /** Does not support STARTTLS at all, but would accept AUTH in plaintext. */
  let plainOnlyServer: SmtpTestServer;
  /** hideSTARTTLS: does not advertise STARTTLS (the command still works), accepts plaintext AUTH. */
  let hiddenStarttlsServer: SmtpTestServer;
  /** Offers STARTTLS and also accepts plaintext AUTH (for SSL senders). */
  let sslServer: SmtpTestServer;
  /** No AUTH at all. */
  let noAuthServer: SmtpTestServer;

  beforeAll(async () => {
    const cert = await testCertificate();
    const auth = { user: SMTP_USER, pass: SMTP_PASS };
    [starttlsServer, plainOnlyServer, hiddenStarttlsServer, sslServer, noAuthServer] = await Promise.all([
      startSmtpTestServer({ auth }),
      startSmtpTestServer({ auth, starttls: 'unsupported', allowInsecureAuth: true }),
      startSmtpTestServer({ auth, starttls: 'hidden', allowInsecureAuth: true }),
      startSmtpTestServer({ auth, allowInsecureAuth: true }),
      startSmtpTestServer({ auth: null }),
    ]);
    t = await createTestApp({
      env: {
        ...NO_RATE_LIMITS,
        DRAGNET_SMTP_CA_FILE: cert.caFile,
        DRAGNET_SMTP_TIMEOUT_MS: '1500',
        DRAGNET_DASHBOARD_URL: 'https://intel.acme.test',
      },
    });
    alice = await deliveryUser(t, 'Acme', 'alice@acme.test');
    other = await deliveryUser(t, 'Globex', 'gina@globex.test');
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all(
      [starttlsServer, plainOnlyServer, hiddenStarttlsServer, sslServer, noAuthServer].map((s) => s?.close()),
    );
  });

  const sender = (server: SmtpTestServer, encryption: 'TLS' | 'SSL', extra: Record<string, unknown> = {}) =>
    alice.created(
      'sender',
      senderBody(`alerts-${encryption.toLowerCase()}-${server.port}@acme.test`, {
        server_host: '127.0.0.1',
        port: server.port,
        username: SMTP_USER,
        password: SMTP_PASS,
        encryption_method: encryption,
        ...extra,
      }),
    );

  const sendTest = async (api: DeliveryApi, senderId: number, recipient: string) => {
    const response = await api.testEmail({ sender_id: senderId, recipient });
    expect(response.statusCode, response.body).toBe(202);
    return response;
  };

  it('a TLS sender upgrades with STARTTLS before AUTH, and the test email arrives', async () => {
    const { id } = await sender(starttlsServer, 'TLS');
    const response = await sendTest(alice, id, 'soc@acme.test');
    expect(response.json()).toMatchObject({ sender_id: id, recipient: 'soc@acme.test' });
    await t.container.delivery.idle();

    expect(starttlsServer.auths).toHaveLength(1);
    expect(starttlsServer.auths[0]).toMatchObject({
      username: SMTP_USER,
      password: SMTP_PASS,
      secure: true,
      accepted: true,
    });
    expect(starttlsServer.mailFromSecure).toEqual([true]);
    expect(starttlsServer.messages).toHaveLength(1);
    const [message] = starttlsServer.messages;
    expect(message!.to).toEqual(['soc@acme.test']);
    expect(message!.from).toBe(`alerts-tls-${starttlsServer.port}@acme.test`);
    expect(message!.user).toBe(SMTP_USER);
    expect(message!.parsed.subject).toMatch(/^\[Test\] /);
    expect(message!.parsed.html).toContain('Test message');
    expect(message!.parsed.html).toContain('href="https://intel.acme.test/"');

    const attempts = await alice.attempts({ channel: 'email' });
    expect(attempts.results[0]).toMatchObject({
      channel: 'email',
      purpose: 'test_email',
      status: 'success',
      target: 'soc@acme.test',
      error: null,
    });
  });

  it('a TLS sender FAILS against a server that does not support STARTTLS, never sends the password, and the failure is recorded', async () => {
    const { id } = await sender(plainOnlyServer, 'TLS');
    await sendTest(alice, id, 'soc@acme.test');
    await t.container.delivery.idle();

    expect(plainOnlyServer.connections).toBeGreaterThanOrEqual(1);
    expect(plainOnlyServer.auths).toEqual([]);
    expect(plainOnlyServer.messages).toEqual([]);
    const attempts = await alice.attempts({ channel: 'email', status: 'failed' });
    expect(attempts.count).toBeGreaterThanOrEqual(1);
    const failed = attempts.results[0]!;
    expect(failed).toMatchObject({
      channel: 'email',
      purpose: 'test_email',
      status: 'failed',
      target: 'soc@acme.test',
    });
    expect(failed.error).toEqual(expect.any(String));
    expect(failed.error!.length).toBeGreaterThan(0);
    expect(failed.error).toMatch(/tls/i);
  });

  it('a TLS sender facing hideSTARTTLS (not advertised) still never authenticates in plaintext: it upgrades or fails', async () => {
    const { id } = await sender(hiddenStarttlsServer, 'TLS');
    await sendTest(alice, id, 'soc@acme.test');
    await t.container.delivery.idle();
    // Whatever the sender does, no credentials may cross an unencrypted connection.
    for (const auth of hiddenStarttlsServer.auths) expect(auth.secure).toBe(true);
    for (const secure of hiddenStarttlsServer.mailFromSecure) expect(secure).toBe(true);
    const attempt = (await alice.attempts({ channel: 'email' })).results[0]!;
    if (attempt.status === 'success') {
      // nodemailer's requireTLS issues STARTTLS even when EHLO does not list it, and smtp-server still honours it.
      expect(hiddenStarttlsServer.auths).toHaveLength(1);
      expect(hiddenStarttlsServer.messages).toHaveLength(1);
    } else {
      expect(hiddenStarttlsServer.auths).toEqual([]);
      expect(hiddenStarttlsServer.messages).toEqual([]);
    }
  });

  it('an SSL sender does not upgrade: AUTH and MAIL FROM run in plaintext, even when STARTTLS is offered', async () => {
    const { id } = await sender(sslServer, 'SSL');
    await sendTest(alice, id, 'soc@acme.test');
    await t.container.delivery.idle();

    expect(sslServer.auths).toHaveLength(1);
    expect(sslServer.auths[0]).toMatchObject({ username: SMTP_USER, secure: false, accepted: true });
    expect(sslServer.mailFromSecure).toEqual([false]);
    expect(sslServer.messages).toHaveLength(1);
    expect(sslServer.messages[0]!.secureAtMailFrom).toBe(false);
    const attempts = await alice.attempts({ channel: 'email' });
    expect(attempts.results[0]).toMatchObject({ status: 'success', purpose: 'test_email' });
  });

  it('authentication_required false sends without AUTH (still upgrading for TLS)', async () => {
    const { id } = await alice.created('sender', {
      email: 'noauth@acme.test',
      server_host: '127.0.0.1',
      port: noAuthServer.port,
      encryption_method: 'TLS',
      authentication_required: false,
    });
    await sendTest(alice, id, 'soc@acme.test');
    await t.container.delivery.idle();
    expect(noAuthServer.auths).toEqual([]);
    expect(noAuthServer.messages).toHaveLength(1);
    expect(noAuthServer.mailFromSecure).toEqual([true]);
  });

  it('a rejected login is recorded as failed, and the error does not carry the password', async () => {
    const { id } = await sender(starttlsServer, 'TLS', {
      email: 'wrong-pass@acme.test',
      password: 'not-the-password-4471',
    });
    const before = starttlsServer.messages.length;
    await sendTest(alice, id, 'soc@acme.test');
    await t.container.delivery.idle();
    expect(starttlsServer.auths.at(-1)).toMatchObject({
      accepted: false,
      secure: true,
      password: 'not-the-password-4471',
    });
    expect(starttlsServer.messages).toHaveLength(before);
    const failed = (await alice.attempts({ channel: 'email', status: 'failed' })).results[0]!;
    expect(failed.purpose).toBe('test_email');
    expect(failed.error).toEqual(expect.any(String));
    expect(failed.error).not.toContain('not-the-password-4471');
    expect(failed.error).not.toContain(SMTP_USER);
  });

  it('test_email answers 202 before the message is sent; the message arrives afterwards', async () => {
    const gated = await startSmtpTestServer({ auth: { user: SMTP_USER, pass: SMTP_PASS }, gated: true });
    try {
      const { id } = await sender(gated, 'TLS');
      await sendTest(alice, id, 'late@acme.test');
      // The server holds MAIL FROM: nothing can have arrived, yet the request has been answered.
      expect(gated.messages).toHaveLength(0);
      gated.release();
      await t.container.delivery.idle();
      expect(gated.messages).toHaveLength(1);
      expect(gated.messages[0]!.to).toEqual(['late@acme.test']);
    } finally {
      gated.release();
      await gated.close();
    }
  });

  it('an SMTP server that never greets is recorded as a failure after DRAGNET_SMTP_TIMEOUT_MS', async () => {
    const silent = await startSilentServer();
    try {
      const { id } = await alice.created(
        'sender',
        senderBody('silent@acme.test', { server_host: '127.0.0.1', port: silent.port }),
      );
      const started = Date.now();
      await sendTest(alice, id, 'soc@acme.test');
      await t.container.delivery.idle();
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(silent.connections).toBe(1);
      const failed = (await alice.attempts({ channel: 'email' })).results[0]!;
      expect(failed).toMatchObject({ status: 'failed', purpose: 'test_email' });
      expect(failed.error).toMatch(/greeting|time/i);
    } finally {
      await silent.close();
    }
  });

  it('a notification email is rendered: values substituted, HTML-escaped in the body, plain in the subject', async () => {
    const { id: senderId } = await sender(starttlsServer, 'TLS', { email: 'render@acme.test' });
    const template = await alice.created<{ id: number }>('template', {
      name: 'Rendering check',
      subject: 'Hits for {alert_rule_name} in {service}: {number_of_hits}',
      body:
        '<h1>{alert_rule_name}</h1><p>{number_of_hits} new of {total_results} ({excluded_count} excluded) in {service} on {current_date}</p>' +
        '<a href="{match_detail_link}">details</a>',
    });
    const before = starttlsServer.messages.length;
    const values = {
      alert_rule_name: 'Leak <script>alert("x")</script> & {service}',
      number_of_hits: 7,
      total_results: 9,
      excluded_count: 2,
      service: "Paste 'sites'",
      current_date: '2026-03-10',
      match_detail_link: 'https://dragnet.example/incidents/42?a=1&b=2',
    };
    const attempt = await t.container.delivery.deliverEmail(alice.orgId, {
      senderId,
      templateId: template.id,
      recipients: ['ir@acme.test', 'ciso@acme.test'],
      values,
      ruleId: 5,
      matchId: 6,
    });
    expect(attempt).toMatchObject({
      status: 'success',
      channel: 'email',
      purpose: 'notification',
      rule_id: 5,
      match_id: 6,
    });

    const messages = await starttlsServer.waitForMessages(before + 1);
    const message = messages[before]!;
    expect(message.to.sort()).toEqual(['ciso@acme.test', 'ir@acme.test']);
    // The subject is plain text: no HTML escaping, and a value that looks like a placeholder stays as it is.
    expect(message.parsed.subject).toBe(`Hits for Leak <script>alert("x")</script> & {service} in Paste 'sites': 7`);
    const html = String(message.parsed.html);
    expect(html).toContain('<h1>Leak &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; {service}</h1>');
    expect(html).not.toContain('<script>');
    expect(html).toContain('<p>7 new of 9 (2 excluded) in Paste &#39;sites&#39; on 2026-03-10</p>');
    expect(html).toContain('href="https://dragnet.example/incidents/42?a=1&amp;b=2"');
    expect(html).not.toMatch(
      /\{(alert_rule_name|number_of_hits|total_results|excluded_count|current_date|match_detail_link)\}/,
    );
    // A plain-text alternative carries the same facts.
    expect(message.parsed.text).toContain('7 new of 9 (2 excluded)');
    expect(message.parsed.text).toContain('Leak <script>alert("x")</script> & {service}');
  });

  it('a subject value with line breaks cannot inject headers', async () => {
    const { id: senderId } = await sender(starttlsServer, 'TLS', { email: 'inject@acme.test' });
    const template = await alice.created<{ id: number }>('template', {
      name: 'Injection check',
      subject: 'Alert: {alert_rule_name}',
      body: '<p>{alert_rule_name} {number_of_hits} {service} {current_date} {match_detail_link}</p>',
    });
    const before = starttlsServer.messages.length;
    await t.container.delivery.deliverEmail(alice.orgId, {
      senderId,
      templateId: template.id,
      recipients: ['ir@acme.test'],
      values: {
        alert_rule_name: 'x\r\nBcc: attacker@evil.test',
        number_of_hits: 1,
        total_results: 1,
        excluded_count: 0,
        service: 's',
        current_date: 'd',
        match_detail_link: 'https://l.example/',
      },
    });
    const message = (await starttlsServer.waitForMessages(before + 1))[before]!;
    expect(message.to).toEqual(['ir@acme.test']);
    expect(message.parsed.bcc).toBeUndefined();
    expect(message.parsed.headers.has('bcc')).toBe(false);
    expect(message.parsed.subject).toContain('Bcc: attacker@evil.test');
  });

  it('test_email: unknown or foreign sender is 404, a bad recipient or body is 400', async () => {
    const [{ id }] = (await alice.listAll<{ id: number }>('sender')) as [{ id: number }];
    const foreign = await other.created(
      'sender',
      senderBody('g@globex.test', { server_host: '127.0.0.1', port: starttlsServer.port }),
    );
    expect((await alice.testEmail({ sender_id: foreign.id, recipient: 'soc@acme.test' })).statusCode).toBe(404);
    expect((await alice.testEmail({ sender_id: 9_999_999, recipient: 'soc@acme.test' })).statusCode).toBe(404);
    expect((await alice.testEmail({ sender_id: id, recipient: 'not-an-address' })).statusCode).toBe(400);
    expect((await alice.testEmail({ sender_id: id, recipient: 'soc@acme.test\r\nBcc: x@evil.test' })).statusCode).toBe(
      400,
    );
    expect((await alice.testEmail({ sender_id: id })).statusCode).toBe(400);
    expect((await alice.testEmail({ sender_id: String(id), recipient: 'soc@acme.test' })).statusCode).toBe(400);
    await t.container.delivery.idle();
  });

  it("deliveries are recorded per organization: another organization's attempts list stays empty", async () => {
    const theirs = await other.attempts();
    expect(theirs).toEqual({ count: 0, next: null, previous: null, results: [] });
  });
});
