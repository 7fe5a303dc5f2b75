import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  relative,
  senderBody,
  templateBody,
  webhookBody,
  type DeliveryResource,
  type ListPage,
} from '../support/delivery-api.ts';
import { channel, message } from '../support/corpus.ts';
import { expectError, type ErrorBody } from '../support/http.ts';
import {
  createRulesApp,
  HOUR,
  iso,
  rulePaths,
  rulesUser,
  writeCorpus,
  type RulesApi,
  type RuleView,
} from '../support/rules-api.ts';
import type { TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

const T0 = Date.parse('2026-03-10T09:00:00Z');

interface Resources {
  recipients: number[];
  senders: number[];
  templates: number[];
  webhooks: number[];
}

/** Delivery resources with example.com targets: nothing in this file is delivered. */
async function createResources(api: RulesApi, tag: string, count = 2): Promise<Resources> {
  const resources: Resources = { recipients: [], senders: [], templates: [], webhooks: [] };
  for (let i = 1; i <= count; i++) {
    resources.recipients.push((await api.delivery.created('recipient', { email: `r${i}-${tag}@acme.test` })).id);
    resources.senders.push((await api.delivery.created('sender', senderBody(`s${i}-${tag}@acme.test`))).id);
    resources.templates.push((await api.delivery.created('template', templateBody(`t${i} ${tag}`))).id);
    resources.webhooks.push((await api.delivery.created('webhook', webhookBody(`w${i} ${tag}`))).id);
  }
  return resources;
}

describe(`rules: delete, restore, list and update (${testEngine})`, () => {
  let t: TestApp;
  let alice: RulesApi;
  let res: Resources;
  let n = 0;

  beforeAll(async () => {
    t = await createRulesApp();
    alice = await rulesUser(t, 'Acme', 'alice@acme.test');
    await t.container.organizations.update('Acme', { alertRuleLimit: 100 });
    res = await createResources(alice, 'acme');
    await writeCorpus(t, [
      channel('india_leaks', [
        message(1, 'india-bank.com dump', { date: T0 - 2 * HOUR, userId: 1 }),
        message(2, 'india-bank.com again', { date: T0 - HOUR, userId: 2 }),
      ]),
    ]);
  });
  afterAll(async () => {
    await t?.close();
  });

  const ruleBody = (extra: Record<string, unknown> = {}) => ({
    name: `rule ${++n}`,
    service: 1,
    args: { query: 'india-bank.com' },
    sender: res.senders[0],
    email_template: res.templates[0],
    recipients: [res.recipients[0]],
    webhook: res.webhooks[0],
    ...extra,
  });

  /** A delivery resource's delete must be refused with 409 naming every referencing rule. */
  async function refusedDeletion(api: RulesApi, resource: DeliveryResource, id: number, rules: RuleView[]) {
    const error = expectError(await api.delivery.remove(resource, id), 409, 'conflict') as ErrorBody & {
      rules?: { id: number; name: string }[];
    };
    for (const rule of rules) expect(error.message).toContain(rule.name);
    expect(error.rules).toEqual(rules.map((rule) => ({ id: rule.id, name: rule.name })));
  }

  it('soft delete: returns the deleted rule with its snapshot, detaches everything, and frees the delivery resources', async () => {
    const own = await createResources(alice, 'delete', 1);
    const body = {
      name: 'To be deleted',
      service: 1,
      args: { query: 'india-bank.com', context_chars: 100 },
      sender: own.senders[0],
      email_template: own.templates[0],
      recipients: [own.recipients[0], res.recipients[1]],
      webhook: own.webhooks[0],
      frequency: 'weekly',
    };
    const rule = await alice.created(body);
    expect(rule).toMatchObject({ total_matches_count: 2, total_alerts_count: 1 });
    const exclusion = (await alice.createExclusion(rule.id, { field: 'user_id', value: '2' })).json() as { id: number };
    const before = (await alice.find(rule.id))!;
    expect(before).toMatchObject({ total_matches_count: 1, total_alerts_count: 1 });

    // While the rule is active, none of its resources can be deleted: 409 naming the rule.
    await refusedDeletion(alice, 'recipient', own.recipients[0]!, [rule]);
    await refusedDeletion(alice, 'sender', own.senders[0]!, [rule]);
    await refusedDeletion(alice, 'template', own.templates[0]!, [rule]);
    await refusedDeletion(alice, 'webhook', own.webhooks[0]!, [rule]);

    t.clock.set(new Date(T0 + 5 * 60_000));
    try {
      const response = await alice.remove(rule.id);
      expect(response.statusCode, response.body).toBe(200);
      const deleted = response.json() as RuleView;
      expect(deleted).toEqual({
        ...before,
        sender: null,
        email_template: null,
        recipients: [],
        webhook: null,
        updated_at: iso(T0 + 5 * 60_000),
        is_deleted: true,
        deleted_at: iso(T0 + 5 * 60_000),
        deleted_by: alice.userId,
        deletion_snapshot: { ...before, exclusions: [{ field: 'user_id', value: '2' }] },
      });
      expect(deleted.deletion_snapshot).toMatchObject({
        sender: own.senders[0],
        email_template: own.templates[0],
        recipients: [own.recipients[0], res.recipients[1]].sort((a, b) => a! - b!),
        webhook: own.webhooks[0],
        args: { query: 'india-bank.com', context_chars: 100 },
        frequency: 'weekly',
        is_deleted: false,
      });
    } finally {
      t.clock.set(new Date(T0));
    }

    // The exclusions are detached too; a deleted rule takes no new ones.
    expect(await alice.exclusions(rule.id)).toEqual([]);
    expectError(await alice.deleteExclusion(exclusion.id), 404);
    expectError(await alice.createExclusion(rule.id, { field: 'user_id', value: '1' }), 409, 'conflict');

    // Listed only with include_deleted; deleting twice or updating it is refused.
    expect((await alice.listAll({ page_size: 100 })).rules.map((r) => r.id)).not.toContain(rule.id);
    expect(
      (await alice.listAll({ page_size: 100, include_deleted: true })).rules.find((r) => r.id === rule.id),
    ).toMatchObject({ is_deleted: true });
    expectError(await alice.remove(rule.id), 404, 'not_found');
    expectError(await alice.update(rule.id, body), 409, 'conflict');

    // Its matches stay readable.
    expect((await alice.matches(rule.id)).count).toBe(1);

    // A deleted rule is not evaluated any more.
    await writeCorpus(t, [channel('india_leaks', [message(3, 'india-bank.com new', { date: T0 + HOUR })])]);
    await t.container.runner.tick(new Date(T0 + 30 * 24 * HOUR));
    expect((await alice.find(rule.id))!.last_run).toBe(iso(T0));
    expect((await alice.matches(rule.id)).count).toBe(1);

    // Now every resource it used can be deleted.
    for (const [resource, id] of [
      ['recipient', own.recipients[0]],
      ['sender', own.senders[0]],
      ['template', own.templates[0]],
      ['webhook', own.webhooks[0]],
    ] as const) {
      const removed = await alice.delivery.remove(resource, id!);
      expect(removed.statusCode, `${resource}: ${removed.body}`).toBe(204);
    }
    // Restoring it now fails: its template is gone, and so are its webhook and one recipient.
    const error = expectError(await alice.restore(rule.id), 400, 'validation_failed');
    expect(error.fields?.map((f) => f.field).sort()).toEqual(['email_template', 'recipients', 'sender', 'webhook']);
  });

  it('a resource used by several rules names them all; it becomes deletable once all are deleted', async () => {
    const own = await createResources(alice, 'shared', 1);
    const a = await alice.created(ruleBody({ webhook: own.webhooks[0] }));
    const b = await alice.created(ruleBody({ webhook: own.webhooks[0] }));
    await refusedDeletion(alice, 'webhook', own.webhooks[0]!, [a, b]);
    expect((await alice.remove(a.id)).statusCode).toBe(200);
    await refusedDeletion(alice, 'webhook', own.webhooks[0]!, [b]);
    expect((await alice.remove(b.id)).statusCode).toBe(200);
    expect((await alice.delivery.remove('webhook', own.webhooks[0]!)).statusCode).toBe(204);
  });

  it('restore brings the rule back from its snapshot with its attachments and exclusions', async () => {
    const rule = await alice.created(
      ruleBody({ name: 'Comes back', recipients: [res.recipients[0], res.recipients[1]] }),
    );
    await alice.createExclusion(rule.id, { field: 'channel_username', value: 'india_leaks' });
    const before = (await alice.find(rule.id))!;
    expect((await alice.remove(rule.id)).statusCode).toBe(200);

    const response = await alice.restore(rule.id);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({ ...before, updated_at: expect.any(String) });
    expect((await alice.exclusions(rule.id)).map((e) => [e.field, e.value])).toEqual([
      ['channel_username', 'india_leaks'],
    ]);
    expect((await alice.list({ webhook_id: res.webhooks[0]!, page_size: 100 })).results.map((r) => r.id)).toContain(
      rule.id,
    );
    // An active rule cannot be restored; an unknown one is 404.
    expectError(await alice.restore(rule.id), 409, 'conflict');
    expectError(await alice.restore(999_999), 404, 'not_found');
  });

  it('restore applies create validation: the name must still be free and the limit not reached', async () => {
    const old = await alice.created(ruleBody({ name: 'Taken again' }));
    expect((await alice.remove(old.id)).statusCode).toBe(200);
    // A deleted rule's name is free for a new rule...
    const fresh = await alice.created(ruleBody({ name: 'Taken again' }));
    // ...so the old one cannot come back under it.
    const error = expectError(await alice.restore(old.id), 400, 'validation_failed');
    expect(error.fields?.map((f) => f.field)).toEqual(['name']);
    expect((await alice.remove(fresh.id)).statusCode).toBe(200);
    expect((await alice.restore(old.id)).statusCode).toBe(200);

    const carol = await rulesUser(t, 'Initech', 'carol@initech.test');
    const carolRes = await createResources(carol, 'initech', 1);
    await t.container.organizations.update('Initech', { alertRuleLimit: 1 });
    const body = {
      service: 1,
      args: { query: 'initech' },
      email_template: carolRes.templates[0],
      recipients: carolRes.recipients,
    };
    const first = await carol.created({ ...body, name: 'first' });
    expect((await carol.remove(first.id)).statusCode).toBe(200);
    await carol.created({ ...body, name: 'second' });
    const limit = expectError(await carol.restore(first.id), 400, 'validation_failed');
    expect(limit.fields).toEqual([expect.objectContaining({ field: 'alert_rule_limit', rule: 6 })]);
  });

  describe('list', () => {
    let org: RulesApi;
    let own: Resources;
    let rules: RuleView[];

    beforeAll(async () => {
      org = await rulesUser(t, 'Listing Co', 'lena@listing.test');
      own = await createResources(org, 'listing', 3);
      const [r1, r2, r3] = own.recipients;
      const [s1, s2] = own.senders;
      const [t1, t2] = own.templates;
      const [w1, w2] = own.webhooks;
      const make = (name: string, extra: Record<string, unknown>) =>
        org.created({
          name,
          service: 8,
          args: { domain: 'listing-example.com' },
          email_template: t1,
          recipients: [r1],
          ...extra,
        });
      rules = [
        await make('L1', { sender: s1, webhook: w1 }),
        await make('L2', { sender: s2, recipients: [r1, r2] }),
        await make('L3', { email_template: t2, recipients: [], webhook: w2 }),
        await make('L4', { sender: s1, recipients: [r2, r3], webhook: w1 }),
        await make('L5', { email_template: t2, webhook: w2 }),
        await make('L6 deleted', { sender: s1, webhook: w1 }),
      ];
      expect((await org.remove(rules[5]!.id)).statusCode).toBe(200);
    });

    const names = (page: { results: RuleView[] } | { rules: RuleView[] }) =>
      ('rules' in page ? page.rules : page.results).map((r) => r.name);

    it('pages through next with count, next and previous; default page size 20', async () => {
      const all = await org.list();
      expect(all).toMatchObject({ count: 5, next: null, previous: null });
      expect(names(all)).toEqual(['L1', 'L2', 'L3', 'L4', 'L5']);

      const first = await org.list({ page_size: 2 });
      expect(first.count).toBe(5);
      expect(first.previous).toBeNull();
      expect(first.next).toMatch(/page=2/);
      const { rules: walked, pages } = await org.listAll({ page_size: 2 });
      expect(pages).toBe(3);
      expect(walked.map((r) => r.name)).toEqual(['L1', 'L2', 'L3', 'L4', 'L5']);
      const last: ListPage<RuleView> = await org.getJson(withPage(3, 2));
      expect(names(last)).toEqual(['L5']);
      expect(last.next).toBeNull();
      expect(names(await org.getJson<ListPage<RuleView>>(relative(last.previous!)))).toEqual(['L3', 'L4']);
      expect((await org.list({ page: 4, page_size: 2 })).results).toEqual([]);
    });

    const withPage = (page: number, size: number) => `${rulePaths.list}?page=${page}&page_size=${size}`;

    it('include_deleted adds soft-deleted rules', async () => {
      expect(names(await org.listAll({ include_deleted: true }))).toEqual(['L1', 'L2', 'L3', 'L4', 'L5', 'L6 deleted']);
      expect(names(await org.listAll({ include_deleted: false }))).toEqual(['L1', 'L2', 'L3', 'L4', 'L5']);
    });

    it('GET alert_rule/{id}/ answers one rule as the list shows it, a deleted one too', async () => {
      for (const listed of (await org.listAll({ include_deleted: true })).rules) {
        expect(await org.getJson(rulePaths.get(listed.id))).toEqual(listed);
      }
    });

    it('recipient_id, sender_id, email_template_id and webhook_id return the rules attached to that entity', async () => {
      const [r1, r2, r3] = own.recipients;
      const [s1, s2] = own.senders;
      const [t1, t2] = own.templates;
      const [w1, w2] = own.webhooks;
      expect(names(await org.listAll({ recipient_id: r1! }))).toEqual(['L1', 'L2', 'L5']);
      expect(names(await org.listAll({ recipient_id: r2! }))).toEqual(['L2', 'L4']);
      expect(names(await org.listAll({ recipient_id: r3! }))).toEqual(['L4']);
      expect(names(await org.listAll({ sender_id: s1! }))).toEqual(['L1', 'L4']);
      expect(names(await org.listAll({ sender_id: s2! }))).toEqual(['L2']);
      expect(names(await org.listAll({ email_template_id: t1! }))).toEqual(['L1', 'L2', 'L4']);
      expect(names(await org.listAll({ email_template_id: t2! }))).toEqual(['L3', 'L5']);
      expect(names(await org.listAll({ webhook_id: w1! }))).toEqual(['L1', 'L4']);
      expect(names(await org.listAll({ webhook_id: w2! }))).toEqual(['L3', 'L5']);
      // Filters combine, and survive paging through next.
      expect(names(await org.listAll({ sender_id: s1!, webhook_id: w1!, recipient_id: r2! }))).toEqual(['L4']);
      const paged = await org.listAll({ recipient_id: r1!, page_size: 1 });
      expect(paged.pages).toBe(3);
      expect(names(paged)).toEqual(['L1', 'L2', 'L5']);
      // The deleted rule was detached, so no resource filter finds it, even with include_deleted.
      expect(names(await org.listAll({ sender_id: s1!, include_deleted: true }))).toEqual(['L1', 'L4']);
      // Ids of another organization or of nothing find nothing.
      expect((await org.list({ webhook_id: res.webhooks[0]! })).count).toBe(0);
      expect((await org.list({ recipient_id: 999_999 })).count).toBe(0);
    });

    it('bad paging or filter values are 400', async () => {
      for (const query of [
        'page=0',
        'page_size=0',
        'page_size=101',
        'recipient_id=abc',
        'sender_id=0',
        'include_deleted=maybe',
      ]) {
        expectError(await org.get(`${rulePaths.list}?${query}`), 400, 'validation_failed');
      }
    });
  });

  describe('update (PUT): full replacement with the same validation', () => {
    let rule: RuleView;

    beforeAll(async () => {
      rule = await alice.created(
        ruleBody({
          name: 'Before update',
          args: { query: 'india-bank.com', context_chars: 50, unique_only: true },
          recipients: [res.recipients[0], res.recipients[1]],
          frequency: 'weekly',
        }),
      );
    });

    it('replaces every field; omitted optional fields go back to their defaults; run state is kept', async () => {
      t.clock.set(new Date(T0 + 60_000));
      try {
        const response = await alice.update(rule.id, {
          name: 'After update',
          service: 1,
          args: { query: 'india-bank.com AND dump' },
          email_template: res.templates[1],
          recipients: [res.recipients[1]],
        });
        expect(response.statusCode, response.body).toBe(200);
        expect(response.json()).toEqual({
          ...rule,
          name: 'After update',
          args: { query: 'india-bank.com AND dump' },
          sender: null,
          email_template: res.templates[1],
          recipients: [res.recipients[1]],
          webhook: null,
          frequency: 'daily',
          updated_at: iso(T0 + 60_000),
        });
        expect(await alice.find(rule.id)).toEqual(response.json());
        // The lists follow the new attachments.
        expect(
          (await alice.list({ webhook_id: res.webhooks[0]!, page_size: 100 })).results.map((r) => r.id),
        ).not.toContain(rule.id);
        expect(
          (await alice.list({ email_template_id: res.templates[1]!, page_size: 100 })).results.map((r) => r.id),
        ).toContain(rule.id);
        rule = response.json() as RuleView;
      } finally {
        t.clock.set(new Date(T0));
      }
    });

    it('the same validation as create, and a rejected update changes nothing', async () => {
      const other = await alice.created(ruleBody({ name: 'Other active rule' }));
      const valid = {
        name: rule.name,
        service: 1,
        args: { query: 'india-bank.com' },
        email_template: res.templates[0],
        recipients: [res.recipients[0]],
      };
      const cases: [Record<string, unknown>, { field: string; rule?: number }[]][] = [
        [{ args: { query: 'x', bogus: 1 } }, [{ field: 'args.bogus', rule: 1 }]],
        [{ args: {} }, [{ field: 'args.query', rule: 2 }]],
        [{ args: { query: 'x', unique_only: 'yes' } }, [{ field: 'args.unique_only', rule: 3 }]],
        [{ args: { query: 'x', createdAt: 1 } }, [{ field: 'args.createdAt', rule: 4 }]],
        [{ recipients: [] }, [{ field: 'recipients', rule: 5 }]],
        [{ service: 13, args: { query: 'Acme Bank' }, frequency: 'daily' }, [{ field: 'frequency', rule: 7 }]],
        [{ name: 'Other active rule' }, [{ field: 'name' }]],
        [{ name: 'y'.repeat(256) }, [{ field: 'name' }]],
        [{ service: 42 }, [{ field: 'service' }]],
        [{ frequency: 'hourly' }, [{ field: 'frequency' }]],
      ];
      for (const [change, fields] of cases) {
        const error = expectError(await alice.update(rule.id, { ...valid, ...change }), 400, 'validation_failed');
        expect(
          error.fields?.map((f) => ({
            field: f.field,
            ...((f as { rule?: number }).rule ? { rule: (f as { rule?: number }).rule } : {}),
          })),
          JSON.stringify(change),
        ).toEqual(fields);
      }
      // Required fields of the full body.
      const { email_template: _template, ...withoutTemplate } = valid;
      expect(expectError(await alice.update(rule.id, withoutTemplate), 400).fields?.map((f) => f.field)).toEqual([
        'email_template',
      ]);
      const { name: _name, ...withoutName } = valid;
      expect(expectError(await alice.update(rule.id, withoutName), 400).fields?.map((f) => f.field)).toEqual(['name']);
      expect(await alice.find(rule.id)).toEqual(rule);

      // Keeping its own name is fine; other organizations' resources are not.
      expect((await alice.update(rule.id, valid)).statusCode).toBe(200);
      const gina = await rulesUser(t, 'Globex', 'gina@globex.test');
      const foreign = await createResources(gina, 'globex', 1);
      for (const [field, value] of [
        ['sender', foreign.senders[0]],
        ['email_template', foreign.templates[0]],
        ['webhook', foreign.webhooks[0]],
        ['recipients', foreign.recipients],
      ] as const) {
        const error = expectError(await alice.update(rule.id, { ...valid, [field]: value }), 400, 'validation_failed');
        expect(
          error.fields?.map((f) => f.field),
          field,
        ).toEqual([field]);
      }
      expectError(await alice.update(999_999, valid), 404, 'not_found');
      expect((await alice.remove(other.id)).statusCode).toBe(200);
    });
  });
});
