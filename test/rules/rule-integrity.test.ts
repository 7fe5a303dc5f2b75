import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../support/http.ts';
import {
  createDeliveryKit,
  createRulesApp,
  messengerRule,
  rulesUser,
  type DeliveryKit,
  type RulesApi,
  type RuleView,
} from '../support/rules-api.ts';
import type { TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

/**
 * Changes to one rule at the same moment (several tabs, a retrying client): each answers a
 * clear status, never a 500, and a deleted rule's snapshot keeps everything it had. The requests
 * run at once on the store's connection pool (PostgreSQL: one connection each).
 */
describe(`rules: concurrent changes to one rule (${testEngine})`, () => {
  let t: TestApp;
  let alice: RulesApi;
  let kit: DeliveryKit;
  let recipients: number[];

  beforeAll(async () => {
    t = await createRulesApp({ env: { DRAGNET_DEFAULT_ALERT_RULE_LIMIT: '100' } });
    alice = await rulesUser(t, 'Acme', 'alice@acme.test');
    kit = await createDeliveryKit(alice, { tag: 'integrity' });
    const extra = await Promise.all(
      [1, 2, 3].map((n) => alice.delivery.created<{ id: number }>('recipient', { email: `extra-${n}@acme.test` })),
    );
    recipients = [kit.recipient.id, ...extra.map((recipient) => recipient.id)];
  });
  afterAll(async () => t?.close());

  const newRule = (name: string) => alice.created({ ...messengerRule(kit, name, 'acme-bank.com'), recipients });
  const statuses = (responses: { statusCode: number }[]) => responses.map((response) => response.statusCode).sort();

  it('20 renames of one rule at once, to one name and to different names: 200 or 409, never a 500', async () => {
    const rule = await newRule('Rename me');
    const body = (name: string) => ({ ...messengerRule(kit, name, 'acme-bank.com'), recipients });
    const same = await Promise.all(Array.from({ length: 20 }, () => alice.update(rule.id, body('Renamed once'))));
    expect(statuses(same).filter((status) => status !== 200 && status !== 409)).toEqual([]);
    expect((await alice.find(rule.id))!.name).toBe('Renamed once');

    const different = await Promise.all(
      Array.from({ length: 20 }, (_, n) => alice.update(rule.id, body(`Renamed ${n}`))),
    );
    expect(statuses(different).filter((status) => status !== 200 && status !== 409)).toEqual([]);
    for (const response of different.filter((r) => r.statusCode === 409)) expectError(response, 409, 'conflict');
    expect((await alice.find(rule.id))!.name).toMatch(/^Renamed \d+$/);
  });

  it('20 rules renamed to one name at once: one wins, the others answer 400 or 409', async () => {
    const rules = await Promise.all(Array.from({ length: 20 }, (_, n) => newRule(`Contender ${n}`)));
    const responses = await Promise.all(
      rules.map((rule) =>
        alice.update(rule.id, { ...messengerRule(kit, 'The one name', 'acme-bank.com'), recipients }),
      ),
    );
    expect(statuses(responses).filter((status) => status === 200)).toHaveLength(1);
    for (const response of responses.filter((r) => r.statusCode !== 200)) {
      expect([400, 409]).toContain(response.statusCode);
      expectError(response, response.statusCode);
    }
  });

  it('10 deletes at once keep every exclusion and recipient in the snapshot, and 10 restores at once bring them all back once', async () => {
    const rule = await newRule('Delete me');
    const exclusions = ['11', '12', '13', '14', '15'];
    for (const value of exclusions)
      expect((await alice.createExclusion(rule.id, { field: 'user_id', value })).statusCode).toBe(201);

    const deletes = await Promise.all(Array.from({ length: 10 }, () => alice.remove(rule.id)));
    expect(statuses(deletes).filter((status) => status === 200)).toHaveLength(1);
    expect(statuses(deletes).filter((status) => status !== 200 && status !== 404)).toEqual([]);

    const restores = await Promise.all(Array.from({ length: 10 }, () => alice.restore(rule.id)));
    expect(statuses(restores).filter((status) => status === 200)).toHaveLength(1);
    for (const response of restores.filter((r) => r.statusCode !== 200)) expectError(response, 409, 'conflict');

    const restored = (await alice.find(rule.id)) as RuleView;
    expect(restored).toMatchObject({ is_deleted: false });
    expect([...restored.recipients].sort()).toEqual([...recipients].sort());
    expect((await alice.exclusions(rule.id)).map((exclusion) => exclusion.value).sort()).toEqual(exclusions);
  });

  it('exclusions added while the rule is deleted are in its snapshot (201) or refused (409), never left on the deleted rule', async () => {
    for (let round = 0; round < 8; round++) {
      const rule = await newRule(`Exclude while deleting ${round}`);
      const values = Array.from({ length: 6 }, (_, n) => String(100 + n));
      const [deleted, ...added] = await Promise.all([
        alice.remove(rule.id),
        ...values.map((value) => alice.createExclusion(rule.id, { field: 'user_id', value })),
      ]);
      expect(deleted!.statusCode, deleted!.body).toBe(200);
      expect(statuses(added).filter((status) => status !== 201 && status !== 409)).toEqual([]);
      const snapshot = deleted!.json<{ deletion_snapshot: { exclusions: { value: string }[] } }>().deletion_snapshot;
      const kept = values.filter((_, n) => added[n]!.statusCode === 201);
      expect(snapshot.exclusions.map((exclusion) => exclusion.value).sort()).toEqual(kept);
      expect(await alice.exclusions(rule.id)).toEqual([]);
    }
  });
});
