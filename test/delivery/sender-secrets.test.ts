import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryUser, NO_RATE_LIMITS, senderBody, settingPath, type DeliveryApi } from '../support/delivery-api.ts';
import { expectError } from '../support/http.ts';
import { readRawStore, sourcesContaining, type RawChunk } from '../support/raw-store.ts';
import { startSmtpTestServer, testCertificate, type SmtpTestServer } from '../support/smtp-test-server.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

const SENDER_USER = 'acme-smtp-login-b41c';
const SENDER_PASS = 'Sender-Secret-Pa55word-7f3e9a';
const SYSTEM_USER = 'sys-smtp-login-8d2f';
const SYSTEM_PASS = 'System-Pa55word-c0ffee-1234';

/** Every spelling a credential could be stored in. */
const spellings = (secret: string): (string | Buffer)[] => [
  secret,
  Buffer.from(secret).toString('base64'),
  Buffer.from(secret).toString('base64url'),
  Buffer.from(secret).toString('hex'),
  encodeURIComponent(secret),
];

interface SenderView {
  id: number;
  email: string;
  is_default: boolean;
  is_system_created: boolean;
}

describe(`sender credentials and the system sender (${testEngine})`, () => {
  let t: TestApp;
  let orgServer: SmtpTestServer;
  let systemServer: SmtpTestServer;
  /** Rejects every login: a failed attempt whose error must not leak the password either. */
  let rejectingServer: SmtpTestServer;
  let acme: DeliveryApi;
  let globex: DeliveryApi;
  /** Every response the API gave in this file. */
  const responses: { what: string; body: string; headers: string }[] = [];
  const seen = (what: string, response: LightMyRequestResponse) => {
    responses.push({ what, body: response.body, headers: JSON.stringify(response.headers) });
    return response;
  };

  beforeAll(async () => {
    const cert = await testCertificate();
    [orgServer, systemServer, rejectingServer] = await Promise.all([
      startSmtpTestServer({ auth: { user: SENDER_USER, pass: SENDER_PASS } }),
      startSmtpTestServer({ auth: { user: SYSTEM_USER, pass: SYSTEM_PASS } }),
      startSmtpTestServer({ auth: { user: 'someone-else', pass: 'another-password' } }),
    ]);
    t = await createTestApp({
      env: {
        ...NO_RATE_LIMITS,
        DRAGNET_SMTP_CA_FILE: cert.caFile,
        DRAGNET_SMTP_TIMEOUT_MS: '3000',
        DRAGNET_SYSTEM_SMTP_URL: `smtp://${SYSTEM_USER}:${encodeURIComponent(SYSTEM_PASS)}@127.0.0.1:${systemServer.port}?from=alerts@dragnet.test`,
      },
    });
    acme = await deliveryUser(t, 'Acme', 'alice@acme.test');
    globex = await deliveryUser(t, 'Globex', 'gina@globex.test');
  });
  let closed = false;
  afterAll(async () => {
    // Normally 'at rest' below closes the app to read the checkpointed store; not when it was skipped.
    if (t && !closed) await t.close();
    await Promise.all([orgServer, systemServer, rejectingServer].map((s) => s?.close()));
  });

  describe('the system sender (DRAGNET_SYSTEM_SMTP_URL)', () => {
    const systemSenderOf = async (api: DeliveryApi) => {
      const list = seen('system list', await api.list('sender'));
      expect(list.statusCode).toBe(200);
      const senders = list.json().results as SenderView[];
      const system = senders.filter((s) => s.is_system_created);
      expect(system).toHaveLength(1);
      return { system: system[0]!, senders };
    };

    it('every organization sees it, as is_system_created, with the from address of the URL', async () => {
      for (const api of [acme, globex]) {
        const { system } = await systemSenderOf(api);
        expect(system).toMatchObject({
          email: 'alerts@dragnet.test',
          server_host: '127.0.0.1',
          encryption_method: 'TLS',
          authentication_required: true,
          is_system_created: true,
        });
      }
    });

    it('is the default of an organization without a sender of its own', async () => {
      const { system, senders } = await systemSenderOf(globex);
      expect(senders).toHaveLength(1);
      expect(system.is_default).toBe(true);
    });

    it('cannot be deleted (403), by any organization, and stays listed', async () => {
      const { system } = await systemSenderOf(globex);
      for (const api of [acme, globex]) {
        expectError(seen('delete system', await api.remove('sender', system.id)), 403);
      }
      expect((await systemSenderOf(acme)).system.id).toBe(system.id);
    });

    it('sends for an organization: STARTTLS before AUTH with the URL credentials', async () => {
      const { system } = await systemSenderOf(globex);
      seen('test_email system', await globex.testEmail({ sender_id: system.id, recipient: 'soc@globex.test' }));
      await t.container.delivery.idle();
      expect(systemServer.auths).toEqual([
        expect.objectContaining({ username: SYSTEM_USER, password: SYSTEM_PASS, secure: true, accepted: true }),
      ]);
      expect(systemServer.messages).toHaveLength(1);
      expect(systemServer.messages[0]!).toMatchObject({ from: 'alerts@dragnet.test', to: ['soc@globex.test'] });
    });

    it('is what a rule without a sender of an organization without one sends through (deliverEmail with senderId null)', async () => {
      const template = (await globex.listAll<{ id: number; is_default: boolean }>('template')).find(
        (tpl) => tpl.is_default,
      )!;
      const attempt = await t.container.delivery.deliverEmail(globex.orgId, {
        senderId: null,
        templateId: template.id,
        recipients: ['ir@globex.test'],
        values: {
          alert_rule_name: 'Rule',
          number_of_hits: 1,
          total_results: 1,
          excluded_count: 0,
          service: 'svc',
          current_date: '2026-03-10',
          match_detail_link: 'https://d.example/1',
        },
      });
      expect(attempt.status).toBe('success');
      expect(systemServer.messages.at(-1)!.to).toEqual(['ir@globex.test']);
    });

    it('does not count against the per-organization sender limit', async () => {
      const created: number[] = [];
      for (let i = 0; i < 10; i++) created.push((await globex.created('sender', senderBody(`s${i}@globex.test`))).id);
      expectError(await globex.create('sender', senderBody('s10@globex.test')), 400);
      const { senders, system } = await systemSenderOf(globex);
      expect(senders).toHaveLength(11);
      // Now it has its own senders, the first of them is the default and the system sender is not.
      expect(system.is_default).toBe(false);
      expect(senders.filter((s) => s.is_default).map((s) => s.id)).toEqual([created[0]]);
      for (const id of created) expect((await globex.remove('sender', id)).statusCode).toBe(204);
      expect((await systemSenderOf(globex)).system.is_default).toBe(true);
    });
  });

  describe('an organization sender', () => {
    it('never returns port, username or password: create, list, test_email, attempts', async () => {
      const created = seen(
        'create',
        await acme.create('sender', {
          email: 'alerts@acme.test',
          server_host: '127.0.0.1',
          port: orgServer.port,
          username: SENDER_USER,
          password: SENDER_PASS,
          encryption_method: 'TLS',
        }),
      );
      expect(created.statusCode).toBe(201);
      const sender = created.json() as Record<string, unknown> & { id: number };
      expect(Object.keys(sender).sort()).toEqual([
        'authentication_required',
        'created_at',
        'email',
        'encryption_method',
        'id',
        'is_default',
        'is_system_created',
        'server_host',
      ]);
      expect(sender).toMatchObject({ is_default: true, is_system_created: false, authentication_required: true });

      const list = seen('list', await acme.list('sender'));
      for (const item of list.json().results as Record<string, unknown>[]) {
        expect(item).not.toHaveProperty('port');
        expect(item).not.toHaveProperty('username');
        expect(item).not.toHaveProperty('password');
      }

      // A successful send, and one the server refuses, both end up in the attempts list.
      const sent = seen('test_email ok', await acme.testEmail({ sender_id: sender.id, recipient: 'soc@acme.test' }));
      expect(sent.statusCode).toBe(202);
      const refused = seen(
        'create refused',
        await acme.create(
          'sender',
          senderBody('refused@acme.test', {
            server_host: '127.0.0.1',
            port: rejectingServer.port,
            username: SENDER_USER,
            password: SENDER_PASS,
          }),
        ),
      );
      seen('test_email refused', await acme.testEmail({ sender_id: refused.json().id, recipient: 'soc@acme.test' }));
      await t.container.delivery.idle();

      expect(orgServer.messages).toHaveLength(1);
      expect(orgServer.auths[0]).toMatchObject({ username: SENDER_USER, password: SENDER_PASS, secure: true });
      // The refusing server was offered the credentials, and said no.
      expect(rejectingServer.auths[0]).toMatchObject({ username: SENDER_USER, accepted: false });

      const attempts = seen(
        'attempts',
        await t.request({ method: 'GET', url: settingPath('get_delivery_attempt_list'), token: acme.token }),
      );
      const statuses = (attempts.json().results as { status: string }[]).map((a) => a.status);
      expect(statuses).toEqual(expect.arrayContaining(['success', 'failed']));
      seen(
        'attempts failed',
        await t.request({
          method: 'GET',
          url: `${settingPath('get_delivery_attempt_list')}?status=failed`,
          token: acme.token,
        }),
      );
      seen('list again', await acme.list('sender'));

      expect(responses.length).toBeGreaterThan(10);
      for (const { what, body, headers } of responses) {
        for (const secret of [SENDER_PASS, SENDER_USER, SYSTEM_PASS, SYSTEM_USER, encodeURIComponent(SYSTEM_PASS)]) {
          expect(body, `${what} body`).not.toContain(secret);
          expect(headers, `${what} headers`).not.toContain(secret);
        }
      }
    });
  });

  describe('at rest', () => {
    let whileOpen: RawChunk[];
    let afterClose: RawChunk[];
    let webhookSecret: string;

    beforeAll(async () => {
      webhookSecret = (
        await acme.created<{ secret: string }>('webhook', { name: 'at rest', url: 'https://receiver.example/x' })
      ).secret;
      whileOpen = await readRawStore(t.location);
      closed = true;
      await t.app.close();
      await t.container.close();
      afterClose = await readRawStore(t.location);
    });
    afterAll(() => t.location.drop());

    it('the scan reads the store (it finds the plain sender address)', () => {
      for (const chunks of [whileOpen, afterClose]) {
        expect(chunks.length).toBeGreaterThan(0);
        expect(sourcesContaining(chunks, 'alerts@acme.test').length).toBeGreaterThan(0);
      }
    });

    it('holds no sender password or username, organization or system, in any spelling', () => {
      for (const [when, chunks] of [
        ['while open', whileOpen],
        ['after close', afterClose],
      ] as const) {
        for (const secret of [SENDER_PASS, SENDER_USER, SYSTEM_PASS, SYSTEM_USER]) {
          for (const needle of spellings(secret)) {
            expect(sourcesContaining(chunks, needle), `${when}: ${String(needle)}`).toEqual([]);
          }
        }
      }
    });

    it('holds no webhook signing secret in the clear either (it is returned by the API, but sealed at rest)', () => {
      const key = Buffer.from(webhookSecret.slice('whsec_'.length), 'base64');
      for (const [when, chunks] of [
        ['while open', whileOpen],
        ['after close', afterClose],
      ] as const) {
        for (const needle of [
          webhookSecret,
          webhookSecret.slice('whsec_'.length),
          key,
          key.toString('hex'),
          key.toString('base64url'),
        ]) {
          expect(sourcesContaining(chunks, needle), `${when}: ${String(needle)}`).toEqual([]);
        }
      }
    });
  });
});
