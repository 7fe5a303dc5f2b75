import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel, channelIdsByLabel, message } from '../support/corpus.ts';
import { expectError } from '../support/http.ts';
import { search } from '../support/messenger-search.ts';
import {
  createDeliveryKit,
  createRulesApp,
  HOUR,
  rulesUser,
  writeCorpus,
  type DeliveryKit,
  type RulesApi,
} from '../support/rules-api.ts';
import type { TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

const T0 = Date.parse('2026-03-10T09:00:00Z');

describe(`rules: starting a messenger rule from a search's follow_up_token (${testEngine})`, () => {
  let t: TestApp;
  let alice: RulesApi;
  let gina: RulesApi;
  let kit: DeliveryKit;
  let ginaKit: DeliveryKit;
  let channels: Record<string, number>;

  beforeAll(async () => {
    t = await createRulesApp();
    alice = await rulesUser(t, 'Acme', 'alice@acme.test');
    gina = await rulesUser(t, 'Globex', 'gina@globex.test');
    kit = await createDeliveryKit(alice, { tag: 'acme' });
    ginaKit = await createDeliveryKit(gina, { tag: 'globex' });
    await writeCorpus(t, [
      channel('juliet_a', [
        message(1, 'juliet-bank.com fresh logs', { date: T0 - 3 * HOUR }),
        message(2, 'juliet-bank.com fresh logs', { date: T0 - 2 * HOUR }),
        message(3, 'juliet-bank.com cards', { date: T0 - HOUR }),
      ]),
      channel('juliet_b', [message(4, 'juliet-bank.com fresh logs', { date: T0 - HOUR })]),
    ]);
    channels = await channelIdsByLabel(t, alice.token);
  });
  afterAll(async () => {
    await t?.close();
  });

  const ruleFrom = (token: string, target: DeliveryKit, extra: Record<string, unknown> = {}) => ({
    name: `from search ${Math.random().toString(36).slice(2, 8)}`,
    follow_up_token: token,
    email_template: target.template.id,
    recipients: [target.recipient.id],
    ...extra,
  });

  it('POST messenger-search-create first, then create a rule from its token: service 1 with the search as args', async () => {
    const found = await search(t, alice.token, {
      query: '"fresh logs" juliet-bank.com',
      channel_ids: [channels.juliet_a!],
      context_chars: 120,
    });
    expect(found.total).toBe(2);
    expect(typeof found.follow_up_token).toBe('string');

    const rule = await alice.created(ruleFrom(found.follow_up_token, kit));
    expect(rule.service).toBe(1);
    expect(rule.args).toMatchObject({
      query: '"fresh logs" juliet-bank.com',
      channel_ids: [channels.juliet_a],
      context_chars: 120,
    });
    // Its first run finds what the search found.
    expect(rule).toMatchObject({
      total_matches_count: found.total,
      total_alerts_count: 1,
      last_run: new Date(T0).toISOString(),
    });

    // service 1 may be given explicitly; any other service, or args beside the token, is a 400.
    const withService = await alice.created(ruleFrom(found.follow_up_token, kit, { service: 1 }));
    expect(withService.args).toEqual(rule.args);
    const wrongService = expectError(
      await alice.create(ruleFrom(found.follow_up_token, kit, { service: 8 })),
      400,
      'validation_failed',
    );
    expect(wrongService.fields?.map((f) => f.field)).toEqual(['service']);
    const withArgs = expectError(
      await alice.create(ruleFrom(found.follow_up_token, kit, { args: { query: 'other' } })),
      400,
      'validation_failed',
    );
    expect(withArgs.fields?.map((f) => f.field)).toEqual(['args']);
  });

  it('a unique_only search carries over', async () => {
    const found = await search(t, alice.token, { query: '"fresh logs"', unique_only: true });
    expect(found.total).toBe(1);
    const rule = await alice.created(ruleFrom(found.follow_up_token, kit));
    expect(rule.args).toMatchObject({ query: '"fresh logs"', unique_only: true });
    expect(rule.total_matches_count).toBe(1);
  });

  it("another organization's token, a forged or garbled token are 400 on follow_up_token", async () => {
    const ginaSearch = await search(t, gina.token, { query: 'juliet-bank.com' });
    // Gina can use her own token...
    await gina.created(ruleFrom(ginaSearch.follow_up_token, ginaKit));
    // ...Alice cannot.
    const before = (await alice.list({ include_deleted: true })).count;
    for (const token of [
      ginaSearch.follow_up_token,
      'not-a-token',
      `${ginaSearch.follow_up_token.slice(0, -4)}AAAA`,
      alice.token,
    ]) {
      const error = expectError(await alice.create(ruleFrom(token, kit)), 400, 'validation_failed');
      expect(error.fields?.map((f) => f.field)).toEqual(['follow_up_token']);
    }
    expect((await alice.list({ include_deleted: true })).count).toBe(before);
  });

  it('a token expires after 30 days', async () => {
    const found = await search(t, alice.token, { query: 'juliet-bank.com cards' });
    t.clock.set(new Date(T0 + 31 * 24 * HOUR));
    try {
      await alice.relogin();
      const error = expectError(await alice.create(ruleFrom(found.follow_up_token, kit)), 400, 'validation_failed');
      expect(error.fields?.map((f) => f.field)).toEqual(['follow_up_token']);
    } finally {
      t.clock.set(new Date(T0));
      await alice.relogin();
    }
  });
});
