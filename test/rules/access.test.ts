import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel, message } from '../support/corpus.ts';
import { expectError } from '../support/http.ts';
import {
  createDeliveryKit,
  createRulesApp,
  HOUR,
  messengerRule,
  rulePaths,
  rulesUser,
  writeCorpus,
  type DeliveryKit,
  type ExclusionView,
  type MatchView,
  type RulesApi,
  type RuleView,
} from '../support/rules-api.ts';
import type { TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

const T0 = Date.parse('2026-03-10T09:00:00Z');

describe(`rules: organization isolation and authentication (${testEngine})`, () => {
  let t: TestApp;
  let alice: RulesApi;
  let gina: RulesApi;
  let kit: DeliveryKit;
  let ginaKit: DeliveryKit;
  let rule: RuleView;
  let deletedRule: RuleView;
  let match: MatchView;
  let exclusion: ExclusionView;
  let aliceRefresh: string;

  beforeAll(async () => {
    t = await createRulesApp();
    alice = await rulesUser(t, 'Acme', 'alice@acme.test');
    gina = await rulesUser(t, 'Globex', 'gina@globex.test');
    aliceRefresh = (await t.login('alice@acme.test')).refresh;
    kit = await createDeliveryKit(alice, { tag: 'acme' });
    ginaKit = await createDeliveryKit(gina, { tag: 'globex' });
    await writeCorpus(t, [channel('kilo_leaks', [message(1, 'kilo-bank.com dump', { date: T0 - HOUR, userId: 3 })])]);
    rule = await alice.created(messengerRule(kit, 'Kilo', 'kilo-bank.com'));
    deletedRule = await alice.created(messengerRule(kit, 'Kilo deleted', 'kilo-bank.com'));
    expect((await alice.remove(deletedRule.id)).statusCode).toBe(200);
    [match] = (await alice.matches(rule.id)).results as [MatchView];
    exclusion = (await alice.createExclusion(rule.id, { field: 'user_id', value: '99' })).json() as ExclusionView;
    // Gina has her own rule, so her lists are not empty by accident.
    await gina.created(messengerRule(ginaKit, 'Globex watch', 'kilo-bank.com'));
  });
  afterAll(async () => {
    await t?.close();
  });

  const validBody = () => messengerRule(ginaKit, 'Gina copy', 'kilo-bank.com');

  /** Every id-bearing endpoint, as [label, method, url, body]. */
  const idEndpoints = (): [string, string, string, unknown][] => [
    ['get', 'GET', rulePaths.get(rule.id), undefined],
    ['update', 'PUT', rulePaths.update(rule.id), validBody()],
    ['delete', 'DELETE', rulePaths.remove(rule.id), undefined],
    ['restore', 'POST', rulePaths.restore(deletedRule.id), undefined],
    ['match list', 'GET', rulePaths.matches(rule.id), undefined],
    ['match', 'GET', rulePaths.match(match.id), undefined],
    ['match hits', 'GET', rulePaths.hits(match.id), undefined],
    ['exclusion create', 'POST', rulePaths.createExclusion(rule.id), { field: 'user_id', value: '3' }],
    ['exclusion list', 'GET', rulePaths.exclusions(rule.id), undefined],
    ['exclusion delete', 'DELETE', rulePaths.deleteExclusion(exclusion.id), undefined],
  ];

  it("every rule, match and exclusion endpoint answers 404 for another organization's ids, like an unknown id", async () => {
    for (const [label, method, url, body] of idEndpoints()) {
      const response = await t.request({ method, url, token: gina.token, body });
      const error = expectError(response, 404, 'not_found');
      // Indistinguishable from an id that does not exist.
      const unknownUrl = url.replace(/\/\d+\/?$/, (tail) => tail.replace(/\d+/, '987654'));
      const unknown = expectError(
        await t.request({ method, url: unknownUrl, token: gina.token, body }),
        404,
        'not_found',
      );
      expect(error.message, label).toBe(unknown.message);
    }
  });

  it("another organization's requests changed nothing, and its lists show none of Alice's rules", async () => {
    expect(await alice.find(rule.id)).toMatchObject({ name: 'Kilo', is_deleted: false });
    expect(await alice.find(deletedRule.id)).toMatchObject({ is_deleted: true });
    expect(await alice.exclusions(rule.id)).toEqual([exclusion]);
    const ginaRules = await gina.listAll({ include_deleted: true });
    expect(ginaRules.rules.map((r) => r.name)).toEqual(['Globex watch']);
    // Filtering Gina's list by Alice's resources finds nothing.
    expect((await gina.list({ recipient_id: kit.recipient.id })).count).toBe(0);
    expect((await gina.list({ email_template_id: kit.template.id })).count).toBe(0);
  });

  it("a rule cannot be built from another organization's resources (400 naming the field)", async () => {
    const error = expectError(
      await gina.create(messengerRule(kit, 'Borrowed', 'kilo-bank.com')),
      400,
      'validation_failed',
    );
    expect(error.fields?.map((f) => f.field).sort()).toEqual(['email_template', 'recipients']);
  });

  /** Every endpoint of this area, as [label, method, url, body]. */
  const allEndpoints = (): [string, string, string, unknown][] => [
    ['catalog', 'GET', rulePaths.catalog, undefined],
    ['create', 'POST', rulePaths.create, messengerRule(kit, 'Anonymous', 'kilo-bank.com')],
    ['list', 'GET', rulePaths.list, undefined],
    ...idEndpoints(),
  ];

  it('every endpoint answers 401 without a valid access token, before validation, and changes nothing', async () => {
    const before = await alice.listAll({ include_deleted: true });
    const refused: [string, Record<string, string>][] = [
      ['no header', {}],
      ['empty bearer', { authorization: 'Bearer ' }],
      ['basic scheme', { authorization: 'Basic YWxpY2U6cGFzcw==' }],
      ['garbage token', { authorization: 'Bearer not.a.jwt' }],
      ['refresh token', { authorization: `Bearer ${aliceRefresh}` }],
    ];
    for (const [label, method, url, body] of allEndpoints()) {
      for (const [how, headers] of refused) {
        const response = await t.request({ method, url, body, headers });
        const error = expectError(response, 401, 'unauthorized');
        expect(response.headers['www-authenticate'], `${label} ${how}`).toMatch(/^Bearer/);
        expect(error.fields, `${label} ${how}`).toBeUndefined();
      }
      // An invalid body still gets 401 first: an anonymous caller learns nothing about validation.
      if (body !== undefined) expectError(await t.request({ method, url, body: { bogus: true } }), 401, 'unauthorized');
    }
    expect(await alice.listAll({ include_deleted: true })).toEqual(before);
    expect(await alice.exclusions(rule.id)).toEqual([exclusion]);
  });

  it('an expired access token is 401 on these endpoints too', async () => {
    t.clock.set(new Date(T0 + 25 * HOUR));
    try {
      for (const [label, method, url, body] of allEndpoints()) {
        const error = expectError(await t.request({ method, url, body, token: alice.token }), 401, 'unauthorized');
        expect(error.message, label).toMatch(/expired/);
      }
    } finally {
      t.clock.set(new Date(T0));
    }
  });
});
