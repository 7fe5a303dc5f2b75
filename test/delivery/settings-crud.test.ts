import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  deliveryUser,
  NO_RATE_LIMITS,
  relative,
  senderBody,
  settingPath,
  templateBody,
  VALID_TEMPLATE_BODY,
  webhookBody,
  type DeliveryApi,
  type DeliveryResource,
} from '../support/delivery-api.ts';
import { expectError, fieldsOf } from '../support/http.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

const bodies: Record<DeliveryResource, (n: number) => Record<string, unknown>> = {
  recipient: (n) => ({ email: `r${n}@acme.test` }),
  sender: (n) => senderBody(`s${n}@acme.test`),
  template: (n) => templateBody(`Template ${n}`),
  webhook: (n) => webhookBody(`Hook ${n}`),
};

describe(`delivery settings CRUD (${testEngine})`, () => {
  let t: TestApp;
  let acme: DeliveryApi;
  let globex: DeliveryApi;
  let seq = 0;
  /** A user in an organization of its own, for tests that need an empty one. */
  const freshOrg = async () => {
    seq += 1;
    return deliveryUser(t, `Fresh ${seq}`, `user${seq}@fresh${seq}.test`);
  };

  beforeAll(async () => {
    t = await createTestApp({ env: NO_RATE_LIMITS });
    acme = await deliveryUser(t, 'Acme', 'alice@acme.test');
    globex = await deliveryUser(t, 'Globex', 'gina@globex.test');
  });
  afterAll(() => t?.close());

  describe('every operation of the spec 4.4 table, at its path and method', () => {
    for (const resource of ['recipient', 'sender', 'template', 'webhook'] as const) {
      it(`${resource}: list GET, create POST 201, ${resource === 'template' || resource === 'webhook' ? 'update PUT 200' : 'no update'}, delete DELETE 204`, async () => {
        const api = await freshOrg();
        const created = await t.request({
          method: 'POST',
          url: `/service/alert_system_setting_create_${resource}/`,
          token: api.token,
          body: bodies[resource](1),
        });
        expect(created.statusCode, created.body).toBe(201);
        const item = created.json() as { id: number };
        expect(Number.isInteger(item.id)).toBe(true);

        const list = await t.request({
          method: 'GET',
          url: `/service/alert_system_setting_get_${resource}_list/`,
          token: api.token,
        });
        expect(list.statusCode).toBe(200);
        const page = list.json();
        expect(Object.keys(page).sort()).toEqual(['count', 'next', 'previous', 'results']);
        expect(page.results.map((r: { id: number }) => r.id)).toContain(item.id);
        expect(page).toMatchObject({ count: page.results.length, next: null, previous: null });

        const update = await t.request({
          method: 'PUT',
          url: `/service/alert_system_setting_update_${resource}/${item.id}/`,
          token: api.token,
          body: bodies[resource](2),
        });
        if (resource === 'template' || resource === 'webhook') {
          expect(update.statusCode, update.body).toBe(200);
          expect(update.json()).toMatchObject({ id: item.id, name: bodies[resource](2).name });
        } else {
          expect(update.statusCode).toBe(404);
        }

        const removed = await t.request({
          method: 'DELETE',
          url: `/service/alert_system_setting_delete_${resource}/${item.id}/`,
          token: api.token,
        });
        expect(removed.statusCode, removed.body).toBe(204);
        expect(removed.body).toBe('');
        const after = (await api.list(resource)).json();
        expect(after.results.map((r: { id: number }) => r.id)).not.toContain(item.id);
        expectError(await api.remove(resource, item.id), 404, 'not_found');
      });
    }

    it('needs a bearer token on every operation', async () => {
      for (const [method, url] of [
        ['GET', settingPath('get_recipient_list')],
        ['POST', settingPath('create_webhook')],
        ['PUT', settingPath('update_template', 1)],
        ['DELETE', settingPath('delete_sender', 1)],
        ['POST', settingPath('test_email')],
        ['POST', settingPath('test_webhook', 1)],
        ['GET', settingPath('get_delivery_attempt_list')],
      ] as const) {
        expectError(
          await t.request({ method, url, body: method === 'GET' || method === 'DELETE' ? undefined : {} }),
          401,
        );
      }
    });

    it('rejects unknown body fields (400)', async () => {
      const body = expectError(
        await acme.create('recipient', { email: 'x@acme.test', colour: 'red' }),
        400,
        'validation_failed',
      );
      expect(fieldsOf(body).join(' ')).toContain('colour');
    });
  });

  describe('list paging: {count, next, previous, results}', () => {
    it('pages with page and page_size and links the neighbours', async () => {
      const api = await freshOrg();
      const ids: number[] = [];
      for (let i = 0; i < 5; i++) ids.push((await api.created('recipient', { email: `p${i}@fresh.test` })).id);

      const first = (await api.list('recipient', { page_size: 2 })).json();
      expect(first.count).toBe(5);
      expect(first.results.map((r: { id: number }) => r.id)).toEqual(ids.slice(0, 2));
      expect(first.previous).toBeNull();
      expect(first.next).toEqual(expect.any(String));

      const secondUrl = new URL(first.next, 'http://x');
      expect(secondUrl.pathname).toBe(settingPath('get_recipient_list'));
      expect(secondUrl.searchParams.get('page')).toBe('2');
      expect(secondUrl.searchParams.get('page_size')).toBe('2');
      const second = (await t.request({ method: 'GET', url: relative(first.next), token: api.token })).json();
      expect(second.results.map((r: { id: number }) => r.id)).toEqual(ids.slice(2, 4));
      expect(second.previous).toEqual(expect.any(String));
      expect(new URL(second.previous, 'http://x').searchParams.get('page')).toBe('1');

      const third = (await t.request({ method: 'GET', url: relative(second.next), token: api.token })).json();
      expect(third).toMatchObject({ count: 5, next: null });
      expect(third.results.map((r: { id: number }) => r.id)).toEqual(ids.slice(4));

      const beyond = (await api.list('recipient', { page: 9, page_size: 2 })).json();
      expect(beyond).toMatchObject({ count: 5, results: [], next: null });
    });

    it('rejects a bad page or page_size (400)', async () => {
      const queries: Record<string, string | number>[] = [
        { page: 0 },
        { page_size: 0 },
        { page_size: 101 },
        { page: 'x' },
      ];
      for (const query of queries) {
        expectError(await acme.list('webhook', query), 400, 'validation_failed');
      }
    });
  });

  describe("another organization's resources", () => {
    it('are not listed, and update, delete and test on their ids are 404', async () => {
      const recipient = await globex.created('recipient', { email: 'g@globex.test' });
      const sender = await globex.created('sender', senderBody('g@globex.test'));
      const template = await globex.created('template', templateBody('Globex template'));
      const webhook = await globex.created('webhook', webhookBody('Globex hook'));

      for (const resource of ['recipient', 'sender', 'template', 'webhook'] as const) {
        const listed = await acme.listAll<{ id: number }>(resource);
        const theirs = { recipient, sender, template, webhook }[resource];
        expect(listed.map((r) => r.id)).not.toContain(theirs.id);
        expectError(await acme.remove(resource, theirs.id), 404, 'not_found');
      }
      expectError(await acme.update('template', template.id, templateBody('Hijacked')), 404, 'not_found');
      expectError(await acme.update('webhook', webhook.id, webhookBody('Hijacked')), 404, 'not_found');
      expectError(await acme.testWebhook(webhook.id), 404, 'not_found');
      expectError(await acme.testEmail({ sender_id: sender.id, recipient: 'x@acme.test' }), 404, 'not_found');

      // ... and they are untouched.
      const stillTheirs = await globex.listAll<{ id: number; name?: string }>('template');
      expect(stillTheirs.find((x) => x.id === template.id)!.name).toBe('Globex template');
      expect((await globex.listAll<{ id: number }>('webhook')).map((x) => x.id)).toContain(webhook.id);
    });

    it('unknown ids are 404 too, and non-numeric ids 400', async () => {
      expectError(await acme.update('webhook', 99_999_999, webhookBody('none')), 404, 'not_found');
      expectError(await acme.remove('recipient', 99_999_999), 404, 'not_found');
      expectError(
        await t.request({
          method: 'DELETE',
          url: '/service/alert_system_setting_delete_recipient/abc/',
          token: acme.token,
        }),
        400,
      );
    });
  });

  describe('limits (spec 8.2)', () => {
    for (const resource of ['recipient', 'sender', 'webhook'] as const) {
      it(`the 11th ${resource} is 400 and names the limit; after a delete there is room again`, async () => {
        const api = await freshOrg();
        const ids: number[] = [];
        for (let i = 1; i <= 10; i++) ids.push((await api.created(resource, bodies[resource](i))).id);
        const body = expectError(await api.create(resource, bodies[resource](11)), 400, 'validation_failed');
        expect(body.message).toMatch(/\b10\b/);
        expect(body.message).toContain(resource);
        expect((await api.list(resource)).json().count).toBe(10);
        expect((await api.remove(resource, ids[3]!)).statusCode).toBe(204);
        expect((await api.create(resource, bodies[resource](12))).statusCode).toBe(201);
      });
    }

    it('holds under concurrency: 14 parallel recipient creates leave exactly 10', async () => {
      const api = await freshOrg();
      const responses = await Promise.all(
        Array.from({ length: 14 }, (_, i) => api.create('recipient', { email: `c${i}@fresh.test` })),
      );
      const statuses = responses.map((r) => r.statusCode).sort();
      expect(statuses.filter((s) => s === 201)).toHaveLength(10);
      expect(statuses.filter((s) => s === 400)).toHaveLength(4);
      expect((await api.list('recipient')).json().count).toBe(10);
    });

    it('one organization at its limit does not limit another', async () => {
      const full = await freshOrg();
      for (let i = 1; i <= 10; i++) await full.created('webhook', bodies.webhook(i));
      const other = await freshOrg();
      expect((await other.create('webhook', bodies.webhook(1))).statusCode).toBe(201);
    });
  });

  describe('recipients', () => {
    it('have an email and is_default; a bad address is 400, a duplicate 409', async () => {
      const api = await freshOrg();
      const recipient = await api.created('recipient', { email: 'soc@fresh.test' });
      expect(Object.keys(recipient).sort()).toEqual(['created_at', 'email', 'id', 'is_default']);
      expect(recipient).toMatchObject({ email: 'soc@fresh.test', is_default: true });
      expectError(await api.create('recipient', { email: 'soc@fresh.test' }), 409, 'conflict');
      // Addresses are compared without case.
      expectError(await api.create('recipient', { email: ' SOC@Fresh.TEST ' }), 409, 'conflict');
      for (const email of ['not-an-address', '', 'a@', 42, 'a@b.test\r\nBcc: x@evil.test'])
        expectError(await api.create('recipient', { email }), 400);
      expectError(await api.create('recipient', {}), 400, 'validation_failed');
    });
  });

  describe('templates', () => {
    it('a new organization has one default template carrying every required placeholder', async () => {
      const api = await freshOrg();
      const list = (await api.list('template')).json();
      expect(list.count).toBe(1);
      const [template] = list.results;
      expect(template.is_default).toBe(true);
      for (const placeholder of [
        '{current_date}',
        '{alert_rule_name}',
        '{number_of_hits}',
        '{service}',
        '{match_detail_link}',
      ]) {
        expect(template.body).toContain(placeholder);
      }
      // Listing again does not add another.
      expect((await api.list('template')).json().count).toBe(1);
    });

    it('concurrent first listings still leave a single default template', async () => {
      const api = await freshOrg();
      const lists = await Promise.all(Array.from({ length: 6 }, () => api.list('template')));
      for (const list of lists) expect(list.statusCode).toBe(200);
      const all = await api.listAll<{ is_default: boolean }>('template');
      expect(all).toHaveLength(1);
      expect(all.filter((x) => x.is_default)).toHaveLength(1);
    });

    it('create and update refuse a body missing placeholders (400) and name the missing ones', async () => {
      const api = await freshOrg();
      const missing = '<p>{alert_rule_name} {number_of_hits} {current_date}</p>';
      const onCreate = expectError(
        await api.create('template', templateBody('Broken', { body: missing })),
        400,
        'validation_failed',
      );
      expect(onCreate.message).toContain('{service}');
      expect(onCreate.message).toContain('{match_detail_link}');
      expect(onCreate.message).not.toContain('{alert_rule_name}');
      expect(fieldsOf(onCreate)).toEqual(['body']);

      const template = await api.created('template', templateBody('Fine'));
      const onUpdate = expectError(
        await api.update('template', template.id, templateBody('Fine', { body: '<p>{service}</p>' })),
        400,
        'validation_failed',
      );
      for (const name of ['{current_date}', '{alert_rule_name}', '{number_of_hits}', '{match_detail_link}'])
        expect(onUpdate.message).toContain(name);
      expect(onUpdate.message).not.toContain('{service}');
      // The refused update changed nothing.
      const stored = (await api.listAll<{ id: number; body: string }>('template')).find((x) => x.id === template.id)!;
      expect(stored.body).toBe(VALID_TEMPLATE_BODY);
    });

    it('update replaces name, subject and body', async () => {
      const api = await freshOrg();
      const template = await api.created('template', templateBody('Before'));
      const updated = await api.update('template', template.id, {
        name: 'After',
        subject: 'New {service}',
        body: `<div>${VALID_TEMPLATE_BODY}</div>`,
      });
      expect(updated.statusCode).toBe(200);
      expect(updated.json()).toMatchObject({
        id: template.id,
        name: 'After',
        subject: 'New {service}',
        body: `<div>${VALID_TEMPLATE_BODY}</div>`,
      });
    });
  });

  describe('webhooks', () => {
    it('the url must be an absolute http(s) URL', async () => {
      const api = await freshOrg();
      for (const url of [
        'ftp://example.com/x',
        'javascript:alert(1)',
        'file:///etc/passwd',
        'not a url',
        '/relative',
        '',
      ]) {
        expectError(await api.create('webhook', webhookBody('bad', { url })), 400, 'validation_failed');
      }
      expect((await api.create('webhook', webhookBody('http', { url: 'http://receiver.example/x' }))).statusCode).toBe(
        201,
      );
      expect(
        (await api.create('webhook', webhookBody('https', { url: 'https://receiver.example/x' }))).statusCode,
      ).toBe(201);
    });

    it('the url may have 2048 characters, not 2049 (create and update)', async () => {
      const api = await freshOrg();
      const base = 'https://receiver.example/';
      const at = (length: number) => base + 'a'.repeat(length - base.length);
      expect(at(2048)).toHaveLength(2048);
      const ok = await api.created<{ url: string }>('webhook', webhookBody('long', { url: at(2048) }));
      expect(ok.url).toBe(at(2048));
      const body = expectError(
        await api.create('webhook', webhookBody('too long', { url: at(2049) })),
        400,
        'validation_failed',
      );
      expect(fieldsOf(body)).toEqual(['url']);
      expectError(
        await api.update('webhook', ok.id, webhookBody('too long', { url: at(2049) })),
        400,
        'validation_failed',
      );
    });

    it('headers must be an object of strings', async () => {
      const api = await freshOrg();
      for (const headers of [{ 'X-Number': 1 }, { 'X-Null': null }, { 'X-Obj': { a: 'b' } }, ['X-A: b'], 'X-A: b']) {
        expectError(await api.create('webhook', webhookBody('bad headers', { headers })), 400, 'validation_failed');
      }
      expectError(
        await api.create('webhook', webhookBody('bad name', { headers: { 'Bad Header': 'x' } })),
        400,
        'validation_failed',
      );
      expectError(
        await api.create('webhook', webhookBody('crlf', { headers: { 'X-A': 'b\r\nX-Injected: 1' } })),
        400,
        'validation_failed',
      );
      const ok = await api.created<{ headers: Record<string, string> }>(
        'webhook',
        webhookBody('ok', { headers: { 'X-Api-Key': 'abc', Authorization: 'Bearer z' } }),
      );
      expect(ok.headers).toEqual({ 'X-Api-Key': 'abc', Authorization: 'Bearer z' });
      const without = await api.created<{ headers: Record<string, string> }>('webhook', {
        name: 'no headers',
        url: 'https://receiver.example/',
      });
      expect(without.headers).toEqual({});
    });

    it('reserved header names are 400, in any case, on create and update', async () => {
      const api = await freshOrg();
      const hook = await api.created('webhook', webhookBody('reserved'));
      for (const name of [
        'Content-Type',
        'content-type',
        'X-AlertSystem-Signature',
        'x-alertsystem-signature',
        'User-Agent',
        'Host',
        'Content-Length',
        'Webhook-Signature',
        'webhook-id',
        'Webhook-Timestamp',
      ]) {
        const body = expectError(
          await api.create('webhook', webhookBody('r', { headers: { [name]: 'x' } })),
          400,
          'validation_failed',
        );
        expect(body.message).toContain(name);
        expectError(
          await api.update('webhook', hook.id, webhookBody('r', { headers: { [name]: 'x' } })),
          400,
          'validation_failed',
        );
      }
    });

    it('a secret sent is ignored: the response carries a server-generated whsec_ + base64 of 32 bytes', async () => {
      const api = await freshOrg();
      const mine = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
      const first = await api.created<{ secret: string }>('webhook', webhookBody('one', { secret: mine }));
      const second = await api.created<{ secret: string }>('webhook', webhookBody('two'));
      for (const { secret } of [first, second]) {
        expect(secret).not.toBe(mine);
        expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
        expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
      }
      expect(first.secret).not.toBe(second.secret);

      // Update ignores a sent secret as well, and keeps the real one.
      const updated = await api.update('webhook', first.id, webhookBody('one', { secret: mine }));
      expect(updated.statusCode).toBe(200);
      expect(updated.json().secret).toBe(first.secret);
      const listed = (await api.listAll<{ id: number; secret: string }>('webhook')).find((w) => w.id === first.id)!;
      expect(listed.secret).toBe(first.secret);
    });

    it('update replaces name, url and headers', async () => {
      const api = await freshOrg();
      const hook = await api.created('webhook', webhookBody('before', { headers: { 'X-A': '1' } }));
      const updated = await api.update('webhook', hook.id, {
        name: 'after',
        url: 'https://other.example/x',
        headers: { 'X-B': '2' },
      });
      expect(updated.statusCode).toBe(200);
      expect(updated.json()).toMatchObject({
        id: hook.id,
        name: 'after',
        url: 'https://other.example/x',
        headers: { 'X-B': '2' },
      });
    });
  });

  describe('senders', () => {
    it('port, username and password are write-only; authentication_required defaults to true', async () => {
      const api = await freshOrg();
      const sender = await api.created('sender', {
        email: 'alerts@fresh.test',
        server_host: 'smtp.fresh.test',
        port: 2525,
        username: 'login-name-xyz',
        password: 'pw-that-is-secret-123',
        encryption_method: 'SSL',
      });
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
      expect(sender).toMatchObject({
        email: 'alerts@fresh.test',
        server_host: 'smtp.fresh.test',
        encryption_method: 'SSL',
        authentication_required: true,
        is_system_created: false,
      });
      const list = await api.list('sender');
      expect(list.body).not.toContain('2525');
      expect(list.body).not.toContain('login-name-xyz');
      expect(list.body).not.toContain('pw-that-is-secret-123');
    });

    it('with authentication required, username and password are required; without, they may be left out', async () => {
      const api = await freshOrg();
      expectError(
        await api.create('sender', senderBody('a@fresh.test', { username: undefined, password: undefined })),
        400,
        'validation_failed',
      );
      expectError(
        await api.create('sender', senderBody('a@fresh.test', { password: undefined })),
        400,
        'validation_failed',
      );
      expectError(await api.create('sender', senderBody('a@fresh.test', { password: '' })), 400, 'validation_failed');
      const open = await api.created('sender', {
        email: 'open@fresh.test',
        server_host: 'relay.fresh.test',
        port: 25,
        encryption_method: 'TLS',
        authentication_required: false,
      });
      expect(open).toMatchObject({ authentication_required: false });
    });

    it('encryption_method is only SSL or TLS', async () => {
      const api = await freshOrg();
      for (const encryption_method of ['STARTTLS', 'tls', 'ssl', 'NONE', '', null, undefined]) {
        const body = expectError(
          await api.create('sender', senderBody('e@fresh.test', { encryption_method })),
          400,
          'validation_failed',
        );
        expect(fieldsOf(body).join(' ')).toContain('encryption_method');
      }
    });

    it('port must be 1-65535 and server_host a host name', async () => {
      const api = await freshOrg();
      for (const extra of [
        { port: 0 },
        { port: 65536 },
        { port: '587' },
        { server_host: '' },
        { server_host: 'smtp.example.com/evil' },
        { server_host: 'a b' },
      ]) {
        expectError(await api.create('sender', senderBody('p@fresh.test', extra)), 400, 'validation_failed');
      }
    });

    it('is_system_created sent by a client is ignored: the sender is an ordinary, deletable one', async () => {
      const api = await freshOrg();
      const sender = await api.created('sender', senderBody('sneaky@fresh.test', { is_system_created: true }));
      expect(sender).toMatchObject({ is_system_created: false });
      expect((await api.remove('sender', sender.id)).statusCode).toBe(204);
    });
  });

  // Last in the file: it swaps the app's reference check for a stub (the rules module's own
  // check is exercised by the rules tests) and leaves a no-op one behind.
  describe('resources used by rules (spec 3.5)', () => {
    it('cannot be deleted while a rule references them (409 naming the rule)', async () => {
      const api = await freshOrg();
      const webhook = await api.created('webhook', webhookBody('in use'));
      t.container.delivery.setReferenceCheck(async (orgId, kind, id) =>
        orgId === api.orgId && kind === 'webhook' && id === webhook.id ? [{ id: 77, name: 'Watch Acme' }] : [],
      );
      try {
        const body = expectError(await api.remove('webhook', webhook.id), 409, 'conflict');
        expect(body.message).toContain('Watch Acme');
        expect((await api.listAll<{ id: number }>('webhook')).map((w) => w.id)).toContain(webhook.id);
      } finally {
        t.container.delivery.setReferenceCheck(async () => []);
      }
      expect((await api.remove('webhook', webhook.id)).statusCode).toBe(204);
    });
  });
});
