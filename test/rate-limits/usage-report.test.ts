import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT_SCOPE, serviceScope } from '../../src/modules/usage/limits.ts';
import { expectError, fieldsOf } from '../support/http.ts';
import {
  CATEGORIES_PATH,
  CHANNELS_PATH,
  USAGE_PATH,
  blockOf,
  dailyOf,
  getTimes,
  newMember,
  totalOf,
  usage,
} from '../support/rate-limits.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

/**
 * GET /service/get_usage_limits/ (spec 2.11, 4.3): `total` (account-wide) only without filters
 * and only when account-wide limits are set; `services` blocks filtered by a partial,
 * case-insensitive `service_slug` and by `feature`; `org_id` for MSSP and system accounts.
 */

const NOW = '2026-03-10T09:00:00.000Z';
const slugsOf = (report: { services: { service_slug: string }[] }) => report.services.map((s) => s.service_slug).sort();

describe(`the usage report (${testEngine})`, () => {
  let t: TestApp;
  const ids: Record<string, number> = {};
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    t = await createTestApp();
    t.clock.set(NOW);
    const orgs = t.container.organizations;
    ids.mssp = (await orgs.create('Watchtower')).id;
    ids.client = (await orgs.create('Client A', { managedBy: 'Watchtower' })).id;
    ids.unmanaged = (await orgs.create('Client B')).id;
    for (const [key, org] of [
      ['mssp', 'Watchtower'],
      ['client', 'Client A'],
      ['unmanaged', 'Client B'],
      ['plain', 'Plain'],
    ] as const) {
      const member = await newMember(t, org);
      tokens[key] = member.token;
      ids[key] = member.orgId;
    }
    tokens.system = (await newMember(t, 'Operators', 'system')).token;
  });
  afterAll(() => t.close());

  it('lists every service block with its daily entry, and the account-wide entries as total', async () => {
    await getTimes(t, tokens.plain!, CHANNELS_PATH, 3);
    await getTimes(t, tokens.plain!, CATEGORIES_PATH, 1);
    t.clock.set('2026-03-10T09:00:01.000Z');
    const report = await usage(t, tokens.plain!);

    expect(blockOf(report, 'messenger-channels')).toEqual({
      feature: 'messenger search',
      service_name: 'Messenger channels',
      service_slug: 'messenger-channels',
      limits: [{ period: '1 Day', limit: 1000, used: 3, remaining: 997, reset_seconds: 15 * 3600 - 1 }],
    });
    expect(dailyOf(report, 'messenger-channels-categories')).toMatchObject({ used: 1, remaining: 999 });
    expect(blockOf(report, 'get_usage_limits')).toMatchObject({ feature: 'usage', service_name: 'Usage limits' });
    // This request is reserved before the handler reads the counts, so it is included.
    expect(dailyOf(report, 'get_usage_limits').used).toBe(1);
    expect(report.total).toEqual([
      { period: '1 Second', limit: 25, used: 1, remaining: 24, reset_seconds: 1 },
      { period: '1 Month', limit: 100_000, used: 5, remaining: 99_995, reset_seconds: (21 * 24 + 15) * 3600 - 1 },
    ]);
    t.clock.set(NOW);
  });

  it('service_slug matches part of a slug, case-insensitively, and omits total', async () => {
    const channels = await usage(t, tokens.plain!, 'service_slug=CHANNELS');
    expect(slugsOf(channels)).toEqual(['messenger-channels', 'messenger-channels-categories']);
    expect(channels).not.toHaveProperty('total');

    expect(slugsOf(await usage(t, tokens.plain!, 'service_slug=Search-Hist'))).toEqual(['messenger-search-history']);
    expect(slugsOf(await usage(t, tokens.plain!, 'service_slug=usage_lim'))).toEqual(['get_usage_limits']);
    const none = await usage(t, tokens.plain!, 'service_slug=no-such-service');
    expect(none).toEqual({ services: [] });
  });

  it('feature selects the blocks of one feature, case-insensitively, and omits total', async () => {
    const messenger = await usage(t, tokens.plain!, 'feature=MESSENGER%20Search');
    expect(slugsOf(messenger)).toEqual([
      'messenger-channels',
      'messenger-channels-categories',
      'messenger-search-create',
      'messenger-search-history',
    ]);
    expect(messenger).not.toHaveProperty('total');
    for (const block of messenger.services) expect(block.feature).toBe('messenger search');

    const usageFeature = await usage(t, tokens.plain!, 'feature=usage');
    expect(slugsOf(usageFeature)).toEqual(['get_usage_limits']);
    expect(usageFeature).not.toHaveProperty('total');
  });

  it('both filters together: the blocks matching both, no total', async () => {
    const both = await usage(t, tokens.plain!, 'service_slug=categories&feature=messenger%20search');
    expect(slugsOf(both)).toEqual(['messenger-channels-categories']);
    expect(both).not.toHaveProperty('total');
    expect(await usage(t, tokens.plain!, 'service_slug=channels&feature=auth')).toEqual({ services: [] });
  });

  it('total disappears when no account-wide limit is set, and shows only the ones that are', async () => {
    const { token, orgId } = await newMember(t, 'No Account Limits');
    await t.container.limits.setOverride(orgId, ACCOUNT_SCOPE, 'second', null);
    await t.container.limits.setOverride(orgId, ACCOUNT_SCOPE, 'month', null);
    const without = await usage(t, token);
    expect(without).not.toHaveProperty('total');
    expect(without.services.length).toBeGreaterThan(0);

    await t.container.limits.setOverride(orgId, ACCOUNT_SCOPE, 'month', 500);
    const monthOnly = await usage(t, token);
    expect(monthOnly.total?.map((e) => e.period)).toEqual(['1 Month']);
    expect(totalOf(monthOnly, '1 Month')).toMatchObject({ limit: 500, used: 1, remaining: 499 });
  });

  it("an MSSP account reads a managed organization's usage with org_id", async () => {
    await t.container.limits.setOverride(ids.client!, serviceScope('messenger-channels'), 'day', 7);
    await getTimes(t, tokens.client!, CHANNELS_PATH, 2);

    const managed = await usage(t, tokens.mssp!, `org_id=${ids.client}`);
    expect(dailyOf(managed, 'messenger-channels')).toMatchObject({ limit: 7, used: 2, remaining: 5 });
    expect(managed.total).toBeDefined();

    // With a filter as well.
    const filtered = await usage(t, tokens.mssp!, `org_id=${ids.client}&service_slug=messenger-channels`);
    expect(dailyOf(filtered, 'messenger-channels')).toMatchObject({ limit: 7, used: 2 });
    expect(filtered).not.toHaveProperty('total');

    // Its own report is its own.
    const own = await usage(t, tokens.mssp!);
    expect(dailyOf(own, 'messenger-channels')).toMatchObject({ limit: 1000, used: 0 });
  });

  it('a system account reads any organization with org_id', async () => {
    await getTimes(t, tokens.unmanaged!, CHANNELS_PATH, 4);
    const report = await usage(t, tokens.system!, `org_id=${ids.unmanaged}`);
    expect(dailyOf(report, 'messenger-channels').used).toBe(4);
  });

  it('org_id is refused (403) for a plain member, and 404 for an organization the MSSP does not manage', async () => {
    const plain = await t.request({ method: 'GET', url: `${USAGE_PATH}?org_id=${ids.client}`, token: tokens.plain });
    expect(fieldsOf(expectError(plain, 403, 'forbidden'))).toEqual(['org_id']);

    const unmanaged = await t.request({
      method: 'GET',
      url: `${USAGE_PATH}?org_id=${ids.unmanaged}`,
      token: tokens.mssp,
    });
    expect(fieldsOf(expectError(unmanaged, 404, 'not_found'))).toEqual(['org_id']);

    const missing = await t.request({ method: 'GET', url: `${USAGE_PATH}?org_id=999999`, token: tokens.mssp });
    expectError(missing, 404, 'not_found');

    // A managed organization's member cannot read its MSSP either.
    expectError(
      await t.request({ method: 'GET', url: `${USAGE_PATH}?org_id=${ids.mssp}`, token: tokens.client }),
      403,
      'forbidden',
    );

    // Naming one's own organization is allowed.
    expect(
      (await t.request({ method: 'GET', url: `${USAGE_PATH}?org_id=${ids.plain}`, token: tokens.plain })).statusCode,
    ).toBe(200);
  });
});
