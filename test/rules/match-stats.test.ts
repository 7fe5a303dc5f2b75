import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel, message } from '../support/corpus.ts';
import { expectError, fieldsOf } from '../support/http.ts';
import {
  createDeliveryKit,
  createRulesApp,
  HOUR,
  messengerRule,
  rulesApi,
  rulesUser,
  withQuery,
  writeCorpus,
  type RulesApi,
  type RuleView,
} from '../support/rules-api.ts';
import type { TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

/** GET alert_system_match_stats (docs/api.md "Incidents"): the home page's matches over time and busiest rules. */
const STATS = '/service/alert_system_match_stats/';

interface StatsView {
  days: number;
  from: string;
  by_day: { day: string; matches: number; new_hits: number }[];
  busiest_rules: { rule_id: number; rule_name: string; source: string | null; matches: number; new_hits: number }[];
}

const DAY = 24 * HOUR;
const T0 = Date.parse('2026-01-15T12:00:00Z');

describe(`match statistics across rules (${testEngine})`, () => {
  let t: TestApp;
  let alice: RulesApi;
  let gina: RulesApi;
  const rules: Record<'alpha' | 'beta' | 'gamma', RuleView> = {} as never;

  /** alpha matches 2 messages on Jan 15; beta and gamma one each on Jan 17; Globex's rule one on Jan 17. */
  beforeAll(async () => {
    t = await createRulesApp();
    t.clock.set(new Date(T0));
    alice = await rulesUser(t, 'Acme', 'alice@acme.test');
    gina = await rulesUser(t, 'Globex', 'gina@globex.test');
    await writeCorpus(t, [
      channel('stats_leaks', [
        message(1, 'alpha-bank.com dump', { date: T0 - 2 * HOUR, userId: 1 }),
        message(2, 'alpha-bank.com more', { date: T0 - HOUR, userId: 2 }),
        message(3, 'beta-bank.com combo', { date: T0 + 2 * DAY - HOUR, userId: 3 }),
        message(4, 'gamma-bank.com logs', { date: T0 + 2 * DAY - HOUR, userId: 4 }),
      ]),
    ]);
    const kit = await createDeliveryKit(alice, { tag: 'acme' });
    const ginaKit = await createDeliveryKit(gina, { tag: 'globex' });
    rules.alpha = await alice.created(messengerRule(kit, 'Watch alpha', 'alpha-bank.com'));
    t.clock.set(new Date(T0 + 2 * DAY));
    // Two days on, the first sign-in's token has expired.
    alice = rulesApi(t, (await t.login('alice@acme.test')).access, alice.orgId, alice.userId, 'alice@acme.test');
    gina = rulesApi(t, (await t.login('gina@globex.test')).access, gina.orgId, gina.userId, 'gina@globex.test');
    rules.beta = await alice.created(messengerRule(kit, 'Watch beta', 'beta-bank.com'));
    rules.gamma = await alice.created(messengerRule(kit, 'Watch gamma', 'gamma-bank.com'));
    await gina.created(messengerRule(ginaKit, 'Globex gamma', 'gamma-bank.com'));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('counts matches and new hits per UTC day, oldest first, with empty days as 0, and names the busiest rules', async () => {
    const stats = await alice.getJson<StatsView>(STATS);
    expect(stats.days).toBe(30);
    expect(stats.from).toBe('2025-12-19T00:00:00.000Z');
    expect(stats.by_day).toHaveLength(30);
    expect(stats.by_day.at(-1)).toEqual({ day: '2026-01-17', matches: 2, new_hits: 2 });
    expect(stats.by_day.at(-2)).toEqual({ day: '2026-01-16', matches: 0, new_hits: 0 });
    expect(stats.by_day.at(-3)).toEqual({ day: '2026-01-15', matches: 1, new_hits: 2 });
    expect(stats.by_day.reduce((sum, day) => sum + day.matches, 0)).toBe(3);
    expect(stats.busiest_rules).toEqual([
      { rule_id: rules.alpha.id, rule_name: 'Watch alpha', source: 'messenger', matches: 1, new_hits: 2 },
      { rule_id: rules.beta.id, rule_name: 'Watch beta', source: 'messenger', matches: 1, new_hits: 1 },
      { rule_id: rules.gamma.id, rule_name: 'Watch gamma', source: 'messenger', matches: 1, new_hits: 1 },
    ]);
  });

  it('a shorter period leaves older matches out', async () => {
    const stats = await alice.getJson<StatsView>(withQuery(STATS, { days: 2 }));
    expect(stats.by_day).toEqual([
      { day: '2026-01-16', matches: 0, new_hits: 0 },
      { day: '2026-01-17', matches: 2, new_hits: 2 },
    ]);
    expect(stats.busiest_rules.map((rule) => rule.rule_name)).toEqual(['Watch beta', 'Watch gamma']);
  });

  it("counts only the organization's own rules", async () => {
    const stats = await gina.getJson<StatsView>(STATS);
    expect(stats.by_day.at(-1)).toEqual({ day: '2026-01-17', matches: 1, new_hits: 1 });
    expect(stats.busiest_rules.map((rule) => rule.rule_name)).toEqual(['Globex gamma']);
    expect((await t.request({ method: 'GET', url: STATS })).statusCode).toBe(401);
  });

  it('a period outside 1 to 90 days is a 400 naming days', async () => {
    for (const days of ['0', '91', 'week']) {
      expect(fieldsOf(expectError(await alice.get(withQuery(STATS, { days })), 400, 'validation_failed'))).toEqual([
        'days',
      ]);
    }
  });
});
