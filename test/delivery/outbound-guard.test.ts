import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryUser, NO_RATE_LIMITS, senderBody, webhookBody, type DeliveryApi } from '../support/delivery-api.ts';
import {
  selfSignedCertificate,
  startSilentServer,
  startSmtpTestServer,
  testCertificate,
  type SmtpTestServer,
  type TestCertificate,
} from '../support/smtp-test-server.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

/**
 * The outbound guard on webhooks and SMTP senders, through the API: loopback listeners count
 * every connection accepted, so a refusal is proven to happen before connecting. Non-loopback
 * targets are literals the guard judges without any network traffic.
 */
type Listener = Awaited<ReturnType<typeof startSilentServer>>;

describe(`outbound guard: webhooks and senders (${testEngine})`, () => {
  let t: TestApp;
  let api: DeliveryApi;
  let blocked: Listener;
  let banner: Listener;

  beforeAll(async () => {
    blocked = await startSilentServer();
    // A MySQL-like handshake: a NUL, non-UTF-8 bytes and a server version, then a line end.
    banner = await startSilentServer(
      Buffer.concat([
        Buffer.from([0x4a, 0x00, 0x00, 0x00, 0x0a]),
        Buffer.from('5.7.44-MariaDB-secret-banner'),
        Buffer.from([0x00, 0xff, 0xfe, 0xc3, 0x28, 0x0d, 0x0a]),
      ]),
    );
    t = await createTestApp({
      // Only the banner server's port: every other loopback port stays refused.
      env: {
        ...NO_RATE_LIMITS,
        DRAGNET_OUTBOUND_ALLOW_HOSTS: `127.0.0.1:${banner.port}`,
        DRAGNET_SMTP_TIMEOUT_MS: '2000',
        DRAGNET_WEBHOOK_TIMEOUT_MS: '2000',
      },
    });
    api = await deliveryUser(t, 'Acme', 'alice@acme.test');
  });
  afterAll(async () => {
    await t?.close();
    await blocked?.close();
    await banner?.close();
  });

  it('refuses a webhook to every IPv6 spelling that embeds a blocked IPv4, without connecting', async () => {
    const port = blocked.port;
    const targets = [
      // IPv4-compatible ::/96
      `http://[::7f00:1]:${port}/`,
      `http://[::127.0.0.1]:${port}/`,
      'http://[::a9fe:a9fe]/latest/meta-data/',
      'http://[::a00:1]/',
      // IPv4-mapped ::ffff:0:0/96 and IPv4-translated ::ffff:0:0:0/96
      `http://[::ffff:7f00:1]:${port}/`,
      `http://[0:0:0:0:0:ffff:127.0.0.1]:${port}/`,
      'http://[::ffff:169.254.169.254]/latest/meta-data/',
      `http://[::ffff:0:7f00:1]:${port}/`,
      // NAT64: the well-known prefix (judged by the IPv4) and the local-use one
      `http://[64:ff9b::7f00:1]:${port}/`,
      'http://[64:ff9b::a9fe:a9fe]/latest/meta-data/',
      'http://[64:ff9b::10.0.0.1]/',
      'http://[64:ff9b:1::a9fe:a9fe]/',
      // 6to4 2002::/16 and Teredo 2001::/32 (client 127.0.0.1 obfuscated as 80ff:fffe)
      `http://[2002:7f00:1::1]:${port}/`,
      'http://[2002:a9fe:a9fe::1]/',
      `http://[2001:0:4136:e378:8000:63bf:80ff:fffe]:${port}/`,
      'http://[2001::a9fe:a9fe]/',
    ];
    for (const url of targets) {
      const created = await api.created('webhook', webhookBody(`w${targets.indexOf(url)}`, { url }));
      const response = await api.testWebhook(created.id);
      expect(response.statusCode, url).toBe(200);
      expect(response.json(), url).toMatchObject({
        status: 'failed',
        status_code: null,
        error: expect.stringMatching(/^refused: /),
      });
      expect((await api.remove('webhook', created.id)).statusCode).toBe(204);
    }
    expect(blocked.connections).toBe(0);
  });

  it('refuses an SMTP sender on a loopback port that is not allowed, and internal literals, without connecting', async () => {
    for (const [host, port] of [
      ['127.0.0.1', blocked.port],
      ['localhost', blocked.port],
      ['169.254.169.254', 25],
      ['10.0.0.1', 25],
      ['::ffff:a00:1', 25],
    ] as const) {
      const sender = await api.created(
        'sender',
        senderBody(`s-${port}@acme.test`, {
          server_host: host,
          port,
          authentication_required: false,
          username: null,
          password: null,
        }),
      );
      expect((await api.testEmail({ sender_id: sender.id, recipient: 'soc@acme.test' })).statusCode).toBe(202);
      await t.container.delivery.idle();
      const [attempt] = (await api.attempts({ channel: 'email' })).results;
      expect(attempt, host).toMatchObject({
        status: 'failed',
        error: expect.stringMatching(/^refused: .*not a public address/),
      });
      expect((await api.remove('sender', sender.id)).statusCode).toBe(204);
    }
    expect(blocked.connections).toBe(0);
  });

  it('a server whose greeting holds a NUL and non-UTF-8 bytes: test_email is recorded in our words only, and the app keeps serving', async () => {
    const sender = await api.created(
      'sender',
      senderBody('mysql@acme.test', {
        server_host: '127.0.0.1',
        port: banner.port,
        encryption_method: 'SSL',
        authentication_required: false,
        username: null,
        password: null,
      }),
    );
    expect((await api.testEmail({ sender_id: sender.id, recipient: 'soc@acme.test' })).statusCode).toBe(202);
    await t.container.delivery.idle();
    expect(banner.connections).toBe(1);
    const [attempt] = (await api.attempts({ channel: 'email' })).results;
    expect(attempt).toMatchObject({ status: 'failed', purpose: 'test_email', target: 'soc@acme.test' });
    expect(attempt!.error).toBe('the SMTP server answered outside the SMTP protocol');
    expect(attempt!.error).not.toMatch(/MariaDB|banner|\ufffd/);
    expect(attempt!.error).not.toContain('\u0000');
    // The process is still up and its store still writable.
    expect((await api.create('recipient', { email: 'after@acme.test' })).statusCode).toBe(201);
  });
});

describe(`outbound guard: TLS to the checked address still names the host (${testEngine})`, () => {
  let t: TestApp;
  let api: DeliveryApi;
  let certificate: TestCertificate;
  let smtp: SmtpTestServer;
  let https: HttpsServer;
  /** The server name (SNI) of each TLS handshake the HTTPS receiver saw. */
  const serverNames: string[] = [];

  beforeAll(async () => {
    // Valid for the name only: a check against the address connected to (127.0.0.1) fails.
    certificate = await selfSignedCertificate('localhost', [{ type: 2, value: 'localhost' }]);
    smtp = await startSmtpTestServer({ certificate, auth: null });
    // SNICallback runs on the ClientHello, before the client can judge the certificate.
    const SNICallback = (name: string, done: (error: Error | null) => void) => {
      serverNames.push(name);
      done(null);
    };
    https = createHttpsServer({ key: certificate.key, cert: certificate.cert, SNICallback }, (_request, response) =>
      response.writeHead(204).end(),
    );
    await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
    const httpsPort = (https.address() as AddressInfo).port;
    t = await createTestApp({
      env: {
        ...NO_RATE_LIMITS,
        DRAGNET_OUTBOUND_ALLOW_HOSTS: `127.0.0.1:${smtp.port},127.0.0.1:${httpsPort}`,
        DRAGNET_SMTP_CA_FILE: certificate.caFile,
        DRAGNET_SMTP_TIMEOUT_MS: '3000',
        DRAGNET_WEBHOOK_TIMEOUT_MS: '3000',
      },
    });
    api = await deliveryUser(t, 'Acme', 'alice@acme.test');
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
    https?.closeAllConnections();
    await new Promise((resolve) => https?.close(resolve));
    certificate?.remove();
  });

  it('a webhook to https://localhost connects to the checked address and sends localhost as the TLS server name', async () => {
    const hook = await api.created(
      'webhook',
      webhookBody('tls', { url: `https://localhost:${(https.address() as AddressInfo).port}/hook` }),
    );
    // The receiver's certificate is self-signed, which webhooks do not trust: the handshake is what counts here.
    expect((await api.testWebhook(hook.id)).json()).toMatchObject({ status: 'failed', status_code: null });
    expect(serverNames).toEqual(['localhost']);
  });

  const sendTo = async (host: string) => {
    const sender = await api.created(
      'sender',
      senderBody(`via-${host}@acme.test`, {
        server_host: host,
        port: smtp.port,
        authentication_required: false,
        username: null,
        password: null,
      }),
    );
    expect((await api.testEmail({ sender_id: sender.id, recipient: 'soc@acme.test' })).statusCode).toBe(202);
    await t.container.delivery.idle();
    return (await api.attempts({ channel: 'email' })).results[0]!;
  };

  it('a sender named localhost connects to the address it resolved and checks the certificate against localhost', async () => {
    expect(await sendTo('localhost')).toMatchObject({ status: 'success', error: null });
    expect(smtp.messages).toHaveLength(1);
    expect(smtp.mailFromSecure).toEqual([true]);
  });

  it('the same server by address fails the certificate check, before anything is sent', async () => {
    expect(await sendTo('127.0.0.1')).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/^TLS with the SMTP server failed: the server's certificate was not accepted/),
    });
    expect(smtp.messages).toHaveLength(1);
  });
});

describe(`outbound guard: the operator's system sender (${testEngine})`, () => {
  let t: TestApp;
  let api: DeliveryApi;
  let relay: SmtpTestServer;

  beforeAll(async () => {
    relay = await startSmtpTestServer({ auth: null });
    t = await createTestApp({
      env: {
        ...NO_RATE_LIMITS,
        // No allow-list: the relay on loopback is reachable through the system sender only.
        DRAGNET_OUTBOUND_ALLOW_HOSTS: '',
        DRAGNET_SYSTEM_SMTP_URL: `smtp://127.0.0.1:${relay.port}?from=alerts@dragnet.test`,
        DRAGNET_SMTP_CA_FILE: (await testCertificate()).caFile,
        DRAGNET_SMTP_TIMEOUT_MS: '3000',
      },
    });
    api = await deliveryUser(t, 'Acme', 'alice@acme.test');
  });
  afterAll(async () => {
    await t?.close();
    await relay?.close();
  });

  it('reaches its relay on loopback, while a tenant sender at the same host and port is refused without connecting', async () => {
    const system = (await api.listAll<{ id: number; is_system_created: boolean }>('sender')).find(
      (sender) => sender.is_system_created,
    )!;
    expect((await api.testEmail({ sender_id: system.id, recipient: 'soc@acme.test' })).statusCode).toBe(202);
    await t.container.delivery.idle();
    expect((await api.attempts({ channel: 'email' })).results[0]).toMatchObject({ status: 'success', error: null });
    expect(relay.messages).toHaveLength(1);

    const own = await api.created(
      'sender',
      senderBody('own@acme.test', {
        server_host: '127.0.0.1',
        port: relay.port,
        authentication_required: false,
        username: null,
        password: null,
      }),
    );
    expect((await api.testEmail({ sender_id: own.id, recipient: 'soc@acme.test' })).statusCode).toBe(202);
    await t.container.delivery.idle();
    expect((await api.attempts({ channel: 'email' })).results[0]).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/^refused: address 127\.0\.0\.1 is not a public address \(loopback\)$/),
    });
    expect(relay.connections).toBe(1);
  });
});
