import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryUser, NO_RATE_LIMITS, senderBody } from '../support/delivery-api.ts';
import { startSmtpTestServer, type SmtpTestServer } from '../support/smtp-test-server.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

const auth = { user: 'cert-user', pass: 'cert-check-password-5521' };

/** STARTTLS certificates are verified unless the operator says otherwise. */
describe(`SMTP certificate verification (${testEngine})`, () => {
  let server: SmtpTestServer;
  const apps: TestApp[] = [];

  beforeAll(async () => {
    server = await startSmtpTestServer({ auth });
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await server?.close();
  });

  async function sendWith(env: Record<string, string>, email: string) {
    const t = await createTestApp({ env: { ...NO_RATE_LIMITS, DRAGNET_SMTP_TIMEOUT_MS: '3000', ...env } });
    apps.push(t);
    const api = await deliveryUser(t, 'Acme', email);
    const sender = await api.created(
      'sender',
      senderBody(email, { server_host: '127.0.0.1', port: server.port, username: auth.user, password: auth.pass }),
    );
    const response = await api.testEmail({ sender_id: sender.id, recipient: 'soc@acme.test' });
    expect(response.statusCode).toBe(202);
    await t.container.delivery.idle();
    return (await api.attempts({ channel: 'email' })).results[0]!;
  }

  it('without a CA file or DRAGNET_SMTP_ALLOW_SELF_SIGNED a self-signed certificate is refused before AUTH', async () => {
    const authsBefore = server.auths.length;
    const messagesBefore = server.messages.length;
    const attempt = await sendWith({}, 'strict@acme.test');
    expect(attempt).toMatchObject({ status: 'failed', purpose: 'test_email' });
    expect(attempt.error).toMatch(/certificate/i);
    expect(server.auths.length).toBe(authsBefore);
    expect(server.messages.length).toBe(messagesBefore);
  });

  it('DRAGNET_SMTP_ALLOW_SELF_SIGNED=true accepts it (and still upgrades before AUTH)', async () => {
    const authsBefore = server.auths.length;
    const attempt = await sendWith({ DRAGNET_SMTP_ALLOW_SELF_SIGNED: 'true' }, 'lenient@acme.test');
    expect(attempt).toMatchObject({ status: 'success', error: null });
    expect(server.auths.slice(authsBefore)).toEqual([expect.objectContaining({ secure: true, accepted: true })]);
    expect(server.messages.at(-1)!.from).toBe('lenient@acme.test');
  });
});
