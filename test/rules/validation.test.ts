import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { senderBody, templateBody, webhookBody } from '../support/delivery-api.ts';
import { expectError, type ErrorBody } from '../support/http.ts';
import {
  createDeliveryKit,
  createRulesApp,
  messengerRule,
  rulesUser,
  type DeliveryKit,
  type RulesApi,
} from '../support/rules-api.ts';
import type { TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

/** fields[] as {field, rule} pairs (rule undefined where none applies). */
const blamed = (error: ErrorBody) =>
  (error.fields ?? []).map((f) => ({ field: f.field, rule: (f as { rule?: number }).rule }));

describe(`rules: create validation (spec 2.10) over HTTP (${testEngine})`, () => {
  let t: TestApp;
  let alice: RulesApi;
  let gina: RulesApi;
  let kit: DeliveryKit;
  let foreign: { recipient: number; sender: number; template: number; webhook: number };
  let n = 0;
  const uniqueName = (prefix: string) => `${prefix} ${++n}`;

  beforeAll(async () => {
    t = await createRulesApp();
    alice = await rulesUser(t, 'Acme', 'alice@acme.test');
    gina = await rulesUser(t, 'Globex', 'gina@globex.test');
    await t.container.organizations.update('Acme', { alertRuleLimit: 200 });
    kit = await createDeliveryKit(alice, { tag: 'acme' });
    // Alice needs a sender and a webhook of her own for the cross-org comparisons.
    kit.sender = {
      id: (await alice.delivery.created('sender', senderBody('alerts@acme.test'))).id,
      email: 'alerts@acme.test',
    };
    const hook = await alice.delivery.created<{ secret: string; url: string }>('webhook', webhookBody('acme hook'));
    kit.webhook = { id: hook.id, secret: hook.secret, url: hook.url };
    foreign = {
      recipient: (await gina.delivery.created('recipient', { email: 'soc@globex.test' })).id,
      sender: (await gina.delivery.created('sender', senderBody('alerts@globex.test'))).id,
      template: (await gina.delivery.created('template', templateBody('globex template'))).id,
      webhook: (await gina.delivery.created('webhook', webhookBody('globex hook'))).id,
    };
  });
  afterAll(async () => {
    await t?.close();
  });

  const body = (extra: Record<string, unknown> = {}) => messengerRule(kit, uniqueName('rule'), 'acme-bank.com', extra);

  /** Create must fail with 400 validation_failed and store nothing; returns the error body. */
  async function rejected(payload: unknown): Promise<ErrorBody> {
    const before = (await alice.list({ include_deleted: true })).count;
    const error = expectError(await alice.create(payload), 400, 'validation_failed');
    expect((await alice.list({ include_deleted: true })).count).toBe(before);
    return error;
  }

  it('a valid body is accepted (control)', async () => {
    const rule = await alice.created(body());
    expect(rule).toMatchObject({
      service: 1,
      args: { query: 'acme-bank.com' },
      sender: kit.sender!.id,
      webhook: kit.webhook!.id,
    });
  });

  it('rule 1: unknown args keys are rejected, each named', async () => {
    const error = await rejected(body({ args: { query: 'acme', Query: 'x', domain: 'acme.com' } }));
    expect(blamed(error)).toEqual([
      { field: 'args.Query', rule: 1 },
      { field: 'args.domain', rule: 1 },
    ]);
    expect(error.fields![0]!.message).toMatch(/not a parameter of Messenger channels/);
  });

  it('rule 2: missing required args are rejected', async () => {
    expect(blamed(await rejected(body({ args: {} })))).toEqual([{ field: 'args.query', rule: 2 }]);
    expect(blamed(await rejected(body({ args: { query: null } })))).toEqual([{ field: 'args.query', rule: 2 }]);
    // Filtered leak: both required params named.
    expect(blamed(await rejected(body({ service: 3, args: { filter_parameters: ['/login'] } })))).toEqual([
      { field: 'args.domain_url', rule: 2 },
      { field: 'args.filter_id', rule: 2 },
    ]);
    // args omitted altogether is the same as an empty object.
    const { args: _args, ...withoutArgs } = body();
    expect(blamed(await rejected(withoutArgs))).toEqual([{ field: 'args.query', rule: 2 }]);
  });

  it('rule 3: each arg value is type-checked', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ query: 42 }, 'args.query'],
      [{ query: '   ' }, 'args.query'],
      [{ query: 'acme', channel_ids: 'all' }, 'args.channel_ids'],
      [{ query: 'acme', channel_ids: [1, 'two'] }, 'args.channel_ids[1]'],
      [{ query: 'acme', unique_only: 'true' }, 'args.unique_only'],
      [{ query: 'acme', context_chars: 2.5 }, 'args.context_chars'],
      // A messenger query is parsed too: an unbalanced parenthesis is a bad value.
      [{ query: '(acme OR' }, 'args.query'],
    ];
    for (const [args, field] of cases) {
      expect(blamed(await rejected(body({ args }))), JSON.stringify(args)).toEqual([{ field, rule: 3 }]);
    }
    // valid_values: filter_id must be one of 1-5.
    const error = await rejected(body({ service: 3, args: { domain_url: 'acme-bank.com', filter_id: 6 } }));
    expect(blamed(error)).toEqual([{ field: 'args.filter_id', rule: 3 }]);
    expect(error.fields![0]!.message).toContain('must be one of: 1, 2, 3, 4, 5');
    // args that are not an object at all.
    for (const args of [[], 'acme', 3, null]) {
      expect(
        blamed(await rejected(body({ args }))).map((f) => f.field),
        JSON.stringify(args),
      ).toEqual(['args']);
    }
  });

  it('rule 4: the key createdAt is reserved in args', async () => {
    const error = await rejected(body({ args: { query: 'acme', createdAt: '2026-01-01T00:00:00Z' } }));
    expect(blamed(error)).toEqual([{ field: 'args.createdAt', rule: 4 }]);
    expect(error.fields![0]!.message).toMatch(/reserved/);
  });

  it('rule 5: at least one of recipients (non-empty) or webhook must be set', async () => {
    // undefined drops the key (omitted), after the JSON round trip below.
    for (const extra of [
      { recipients: [], webhook: null },
      { recipients: [], webhook: undefined },
      { webhook: null, recipients: undefined },
    ]) {
      const payload = body(extra);
      const error = await rejected(JSON.parse(JSON.stringify(payload)));
      expect(blamed(error), JSON.stringify(extra)).toEqual([{ field: 'recipients', rule: 5 }]);
    }
    // Either one alone is enough; sender may be omitted or null.
    await alice.created(body({ recipients: [], webhook: kit.webhook!.id, sender: null }));
    const emailOnly = body({ webhook: null });
    delete (emailOnly as Record<string, unknown>).sender;
    await alice.created(emailOnly);
  });

  it('rule 6: creating past alert_rule_limit is rejected; deleted rules do not count', async () => {
    const carol = await rulesUser(t, 'Initech', 'carol@initech.test');
    await t.container.organizations.update('Initech', { alertRuleLimit: 1 });
    const carolKit = await createDeliveryKit(carol, { tag: 'initech' });
    const first = await carol.created(messengerRule(carolKit, 'the only rule', 'initech'));
    const error = expectError(
      await carol.create(messengerRule(carolKit, 'one too many', 'initech')),
      400,
      'validation_failed',
    );
    expect(blamed(error)).toEqual([{ field: 'alert_rule_limit', rule: 6 }]);
    expect((await carol.list()).count).toBe(1);
    // A soft-deleted rule frees its place.
    expect((await carol.remove(first.id)).statusCode).toBe(200);
    await carol.created(messengerRule(carolKit, 'one too many', 'initech'));
    // Raising the limit lets more in.
    await t.container.organizations.update('Initech', { alertRuleLimit: 2 });
    await carol.created(messengerRule(carolKit, 'second', 'initech'));
    expect(blamed(expectError(await carol.create(messengerRule(carolKit, 'third', 'initech')), 400))).toEqual([
      { field: 'alert_rule_limit', rule: 6 },
    ]);
  });

  it('rule 6 and the name hold under concurrent creates: never past the limit, never two active rules of one name', async () => {
    const dana = await rulesUser(t, 'Umbrella', 'dana@umbrella.test');
    await t.container.organizations.update('Umbrella', { alertRuleLimit: 3 });
    const danaKit = await createDeliveryKit(dana, { tag: 'umbrella' });
    const distinct = await Promise.all(
      Array.from({ length: 6 }, (_, i) => dana.create(messengerRule(danaKit, `parallel ${i}`, 'umbrella'))),
    );
    expect(distinct.map((r) => r.statusCode).sort()).toEqual([201, 201, 201, 400, 400, 400]);
    for (const response of distinct.filter((r) => r.statusCode === 400))
      expect(blamed(response.json())).toEqual([{ field: 'alert_rule_limit', rule: 6 }]);
    expect((await dana.list()).count).toBe(3);

    await t.container.organizations.update('Umbrella', { alertRuleLimit: 20 });
    const same = await Promise.all(
      Array.from({ length: 4 }, () => dana.create(messengerRule(danaKit, 'one name', 'umbrella'))),
    );
    expect(same.map((r) => r.statusCode).sort()).toEqual([201, 400, 400, 400]);
    for (const response of same.filter((r) => r.statusCode === 400))
      expect(blamed(response.json()).map((f) => f.field)).toEqual(['name']);
    expect((await dana.list()).results.filter((r) => r.name === 'one name')).toHaveLength(1);
  });

  it('rule 7: a frequency faster than the service floor is rejected (weekly-floor source asked daily)', async () => {
    // App stores (13) have a weekly floor.
    const appStore = body({ service: 13, args: { query: 'Acme Bank' } });
    const error = await rejected({ ...appStore, frequency: 'daily' });
    expect(blamed(error)).toEqual([{ field: 'frequency', rule: 7 }]);
    expect(blamed(await rejected({ ...appStore, frequency: 'twice_weekly' }))).toEqual([
      { field: 'frequency', rule: 7 },
    ]);
    // Distinct leak (5) has a twice_weekly floor.
    const distinct = body({ service: 5, args: { query: 'acme-bank.com', query_type: 'domain' } });
    expect(blamed(await rejected({ ...distinct, frequency: 'daily' }))).toEqual([{ field: 'frequency', rule: 7 }]);
    expect((await alice.created({ ...distinct, frequency: 'twice_weekly' })).frequency).toBe('twice_weekly');
    expect(
      (await alice.created({ ...body({ service: 13, args: { query: 'Acme Bank' } }), frequency: 'weekly' })).frequency,
    ).toBe('weekly');
  });

  it('every problem is reported at once, each with its field', async () => {
    const error = await rejected({
      ...body({ args: { createdAt: 1, bogus: true }, recipients: [], webhook: null }),
      service: 13,
      frequency: 'daily',
    });
    expect(blamed(error)).toEqual(
      expect.arrayContaining([
        { field: 'args.createdAt', rule: 4 },
        { field: 'args.bogus', rule: 1 },
        { field: 'args.query', rule: 2 },
        { field: 'recipients', rule: 5 },
        { field: 'frequency', rule: 7 },
      ]),
    );
  });

  it('name: required, at most 255 characters, not blank', async () => {
    expect((await alice.created(body({ name: 'n'.repeat(255) }))).name).toBe('n'.repeat(255));
    expect(blamed(await rejected(body({ name: 'x'.repeat(256) }))).map((f) => f.field)).toEqual(['name']);
    expect(blamed(await rejected(body({ name: '' }))).map((f) => f.field)).toEqual(['name']);
    expect(blamed(await rejected(body({ name: '   ' }))).map((f) => f.field)).toEqual(['name']);
    const { name: _name, ...nameless } = body();
    expect(blamed(await rejected(nameless)).map((f) => f.field)).toEqual(['name']);
  });

  it('name: a duplicate of an active rule of the organization is rejected; other organizations may reuse it', async () => {
    await alice.created(body({ name: 'Brand watch' }));
    const error = await rejected(body({ name: 'Brand watch' }));
    expect(blamed(error).map((f) => f.field)).toEqual(['name']);
    // Surrounding white space does not make a different name.
    expect(blamed(await rejected(body({ name: '  Brand watch ' }))).map((f) => f.field)).toEqual(['name']);
    const ginaKit = await createDeliveryKit(gina, { tag: 'globex' });
    await gina.created(messengerRule(ginaKit, 'Brand watch', 'globex'));
  });

  it("references to another organization's sender, template, recipients or webhook are 400 on that field", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ sender: foreign.sender }, 'sender'],
      [{ email_template: foreign.template }, 'email_template'],
      [{ recipients: [kit.recipient.id, foreign.recipient] }, 'recipients'],
      [{ webhook: foreign.webhook }, 'webhook'],
    ];
    for (const [extra, field] of cases) {
      expect(
        blamed(await rejected(body(extra))).map((f) => f.field),
        field,
      ).toEqual([field]);
    }
    // Ids that do not exist at all are rejected the same way.
    expect(
      blamed(
        await rejected(body({ sender: 999_999, email_template: 999_998, webhook: 999_997, recipients: [999_996] })),
      )
        .map((f) => f.field)
        .sort(),
    ).toEqual(['email_template', 'recipients', 'sender', 'webhook']);
  });

  it('an unknown service is a 400 on service', async () => {
    for (const service of [0, 16, 99]) {
      expect(
        blamed(await rejected(body({ service }))).map((f) => f.field),
        String(service),
      ).toEqual(['service']);
    }
    expect(blamed(await rejected(body({ service: '1' }))).map((f) => f.field)).toEqual(['service']);
    const { service: _service, ...serviceless } = body();
    expect(blamed(await rejected(serviceless)).map((f) => f.field)).toEqual(['service']);
  });

  it('a frequency not in the table is a 400 on frequency', async () => {
    expect(blamed(await rejected(body({ frequency: 'hourly' }))).map((f) => f.field)).toEqual(['frequency']);
  });

  it('unknown top-level fields and read-only fields in the body are rejected', async () => {
    expect(blamed(await rejected(body({ total_matches_count: 5 }))).map((f) => f.field)).toEqual([
      'total_matches_count',
    ]);
    expect(blamed(await rejected(body({ colour: 'red' }))).map((f) => f.field)).toEqual(['colour']);
  });

  it('channel ids a search refuses, a rule refuses too (and on update); known ones are accepted', async () => {
    const searchError = expectError(
      await t.request({
        method: 'POST',
        url: '/service/messenger-search-create/',
        token: alice.token,
        body: { query: 'acme', channel_ids: [987654] },
      }),
      400,
      'validation_failed',
    );
    expect(searchError.fields?.[0]?.field).toBe('channel_ids');
    const error = await rejected(body({ args: { query: 'acme', channel_ids: [987654] } }));
    expect(error.fields).toEqual([
      { field: 'args.channel_ids', message: 'unknown channel ids: 987654 (rule 3)', rule: 3 },
    ]);

    await t.container.corpus.write([
      {
        channel: { platform: 'telegram', username: 'refcheck', title: 'Ref Check' },
        messages: [
          {
            messageId: 1,
            userId: null,
            text: 'acme',
            date: Date.parse('2026-03-01T00:00:00Z'),
            hasMedia: false,
            mediaType: null,
            fileName: null,
            links: null,
          },
        ],
      },
    ]);
    const channel = (await alice.getJson<{ items: { id: number }[] }>('/service/messenger-channels/?search=refcheck'))
      .items[0];
    const rule = await alice.created(body({ args: { query: 'acme', channel_ids: [channel!.id] } }));
    expectError(
      await alice.update(rule.id, { args: { query: 'acme', channel_ids: [channel!.id, 987655] } }),
      400,
      'validation_failed',
    );
  });

  it('stored args are normalized (trimmed, absent optionals dropped)', async () => {
    const rule = await alice.created(
      body({ args: { query: '  acme-bank.com  ', unique_only: null, channel_ids: null, context_chars: 120 } }),
    );
    expect(rule.args).toEqual({ query: 'acme-bank.com', context_chars: 120 });
  });
});
