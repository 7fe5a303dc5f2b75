import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT_SCOPE, serviceScope } from '../../src/modules/usage/limits.ts';
import type { HistoryItemBody, ListBody, SearchResponseBody } from '../support/messenger-search.ts';
import {
  ACCOUNT_PATH,
  CATEGORIES_PATH,
  CHANNELS_PATH,
  HISTORY_PATH,
  USAGE_PATH,
  blockOf,
  dailyOf,
  expectRateLimited,
  getTimes,
  newMember,
  rateHeaders,
  secondsBetween,
  totalOf,
  usage,
} from '../support/rate-limits.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

/**
 * The two buckets of spec 8.1 on every authenticated request: the account-wide cap (per second,
 * per month) and the endpoint's own daily limit. Each test uses its own organization, so their
 * counts never meet; the clock stands still unless a test moves it.
 */

const NOW = '2026-03-10T09:00:00.000Z';
const NEXT_MIDNIGHT = '2026-03-11T00:00:00.000Z';
const NEXT_MONTH = '2026-04-01T00:00:00.000Z';

describe(`rate-limit buckets and headers (${testEngine})`, () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
    t.clock.set(NOW);
  });
  afterAll(() => t.close());

  it('reports the defaults: 25/second and 100,000/month per account, the spec table per endpoint, 10,000/day elsewhere', async () => {
    const { token } = await newMember(t, 'Defaults');
    const report = await usage(t, token);

    expect(report.total?.map((e) => [e.period, e.limit]).sort()).toEqual([
      ['1 Month', 100_000],
      ['1 Second', 25],
    ]);
    const daily = (slug: string) => dailyOf(report, slug).limit;
    expect(daily('messenger-search-create')).toBe(100);
    expect(daily('messenger-channels')).toBe(1000);
    expect(daily('messenger-channels-categories')).toBe(1000);
    expect(daily('messenger-search-history')).toBe(1000);
    // Endpoints the spec table does not name: 10,000 per day.
    expect(daily('account')).toBe(10_000);
    expect(daily('get_usage_limits')).toBe(10_000);
    expect(daily('organization')).toBe(10_000);

    // Every service block carries exactly one daily entry by default.
    for (const block of report.services) {
      expect(
        block.limits.map((l) => l.period),
        block.service_slug,
      ).toEqual(['1 Day']);
    }
  });

  it('history, history results and history export are one service in the report', async () => {
    const { token } = await newMember(t, 'Catalog');
    const slugs = (await usage(t, token)).services.map((s) => s.service_slug);
    expect(slugs.filter((s) => s === 'messenger-search-history')).toHaveLength(1);
    expect(slugs.some((s) => s.startsWith('messenger-search-history-'))).toBe(false);
    expect(new Set(slugs).size).toBe(slugs.length);
  });

  it('every response of a limited endpoint describes its daily window and the monthly account window', async () => {
    const { token } = await newMember(t, 'Headers');
    const untilMidnight = secondsBetween(NOW, NEXT_MIDNIGHT);
    const untilMonthEnd = secondsBetween(NOW, NEXT_MONTH);
    expect(untilMidnight).toBe(15 * 3600);

    const first = await t.request({ method: 'GET', url: CHANNELS_PATH, token });
    expect(first.statusCode).toBe(200);
    expect(rateHeaders(first)).toEqual({
      limit: 1000,
      remaining: 999,
      reset: untilMidnight,
      accountLimit: 100_000,
      accountRemaining: 99_999,
      accountReset: untilMonthEnd,
    });

    const second = await t.request({ method: 'GET', url: CHANNELS_PATH, token });
    expect(rateHeaders(second)).toMatchObject({ limit: 1000, remaining: 998, accountRemaining: 99_998 });

    // Another endpoint: its own daily window, the same account window.
    const categories = await t.request({ method: 'GET', url: CATEGORIES_PATH, token });
    expect(rateHeaders(categories)).toMatchObject({
      limit: 1000,
      remaining: 999,
      reset: untilMidnight,
      accountRemaining: 99_997,
    });
    const account = await t.request({ method: 'GET', url: ACCOUNT_PATH, token });
    expect(rateHeaders(account)).toMatchObject({ limit: 10_000, remaining: 9_999, accountRemaining: 99_996 });
  });

  it("an exhausted endpoint limit answers 429 with the spec 7 body, Retry-After and the window's headers", async () => {
    const { token, orgId } = await newMember(t, 'Endpoint Cap');
    await t.container.limits.setOverride(orgId, serviceScope('messenger-channels'), 'day', 2);

    expect(await getTimes(t, token, CHANNELS_PATH, 2)).toEqual([200, 200]);
    const refused = await t.request({ method: 'GET', url: CHANNELS_PATH, token });
    const body = expectRateLimited(refused);
    expect(body.code).toBe('rate_limited');
    expect(body).toMatchObject({ limit: 2, remaining: 0, reset_at: NEXT_MIDNIGHT, retry_after_seconds: 15 * 3600 });
    expect(body.message).toContain('messenger-channels');
    expect(refused.headers['retry-after']).toBe(String(15 * 3600));
    expect(refused.headers['x-request-id']).toBe(body.request_id);

    // Other endpoints are unaffected by this endpoint's limit.
    expect((await t.request({ method: 'GET', url: CATEGORIES_PATH, token })).statusCode).toBe(200);
  });

  it("a 429 still carries the endpoint's X-RateLimit-* (spec 8.1.5) and the account's X-RateLimit-Account-* (docs/api.md)", async () => {
    const { token, orgId } = await newMember(t, 'Refusal Headers');
    await t.container.limits.setOverride(orgId, serviceScope('messenger-channels'), 'day', 1);
    expect(await getTimes(t, token, CHANNELS_PATH, 1)).toEqual([200]);

    const refused = await t.request({ method: 'GET', url: CHANNELS_PATH, token });
    expectRateLimited(refused);

    // Refused by the account cap: the endpoint's own window is untouched, the account one is empty.
    await t.container.limits.setOverride(orgId, ACCOUNT_SCOPE, 'month', 1);
    const byAccount = await t.request({ method: 'GET', url: CATEGORIES_PATH, token });
    expectRateLimited(byAccount);

    expect({ endpoint: rateHeaders(refused), account: rateHeaders(byAccount) }).toMatchObject({
      endpoint: { limit: 1, remaining: 0, reset: 15 * 3600 },
      account: { limit: 1000, remaining: 1000, reset: 15 * 3600, accountLimit: 1, accountRemaining: 0 },
    });
  });

  it('refused requests are not counted: used stays at the limit and the account window does not move', async () => {
    const { token, orgId } = await newMember(t, 'Not Counted');
    await t.container.limits.setOverride(orgId, serviceScope('messenger-channels'), 'day', 2);

    expect(await getTimes(t, token, CHANNELS_PATH, 7)).toEqual([200, 200, 429, 429, 429, 429, 429]);
    const report = await usage(t, token);
    expect(dailyOf(report, 'messenger-channels')).toMatchObject({ limit: 2, used: 2, remaining: 0 });
    // Two admitted channel requests and this report: the five refusals took nothing.
    expect(totalOf(report, '1 Month')).toMatchObject({ used: 3, remaining: 99_997 });
    expect(totalOf(report, '1 Second')).toMatchObject({ used: 3 });

    // Raising the limit by one admits exactly one more request.
    await t.container.limits.setOverride(orgId, serviceScope('messenger-channels'), 'day', 3);
    expect(await getTimes(t, token, CHANNELS_PATH, 2)).toEqual([200, 429]);
  });

  it('an exhausted account-wide monthly cap blocks every endpoint, but not login', async () => {
    const { token, orgId, email } = await newMember(t, 'Account Cap');
    await t.container.limits.setOverride(orgId, ACCOUNT_SCOPE, 'month', 3);

    expect(await getTimes(t, token, CHANNELS_PATH, 3)).toEqual([200, 200, 200]);
    for (const url of [CATEGORIES_PATH, ACCOUNT_PATH, HISTORY_PATH, USAGE_PATH, '/service/organization/']) {
      const refused = await t.request({ method: 'GET', url, token });
      const body = expectRateLimited(refused);
      expect(body, url).toMatchObject({
        limit: 3,
        remaining: 0,
        reset_at: NEXT_MONTH,
        retry_after_seconds: secondsBetween(NOW, NEXT_MONTH),
      });
      expect(body.message).toMatch(/account/i);
    }
    const search = await t.request({
      method: 'POST',
      url: '/service/messenger-search-create/',
      token,
      body: { query: 'blocked' },
    });
    expectRateLimited(search);

    // Login is not a /service/ endpoint and is not limited.
    await t.login(email);

    // The refusals did not count against the endpoints' own daily buckets.
    await t.container.limits.setOverride(orgId, ACCOUNT_SCOPE, 'month', 'default');
    const report = await usage(t, token);
    expect(dailyOf(report, 'messenger-channels-categories').used).toBe(0);
    expect(dailyOf(report, 'account').used).toBe(0);
    expect(dailyOf(report, 'messenger-search-create').used).toBe(0);
    expect(totalOf(report, '1 Month')).toMatchObject({ limit: 100_000, used: 4 });
  });

  it('the per-second account cap: 25 requests over any endpoints in one second, the 26th is 429', async () => {
    const { token } = await newMember(t, 'Per Second');
    t.clock.set('2026-03-10T10:00:00.000Z');
    const urls = [CHANNELS_PATH, CATEGORIES_PATH, ACCOUNT_PATH, HISTORY_PATH, USAGE_PATH];
    for (let i = 0; i < 25; i++) {
      const response = await t.request({ method: 'GET', url: urls[i % urls.length]!, token });
      expect(response.statusCode, `request ${i + 1}`).toBe(200);
    }
    const refused = await t.request({ method: 'GET', url: ACCOUNT_PATH, token });
    expect(expectRateLimited(refused)).toMatchObject({
      limit: 25,
      retry_after_seconds: 1,
      reset_at: '2026-03-10T10:00:01.000Z',
    });
    t.clock.set(NOW);
  });

  it('history, history results and history export draw on one shared daily bucket', async () => {
    const { token, orgId } = await newMember(t, 'Shared History');
    const created = await t.request({
      method: 'POST',
      url: '/service/messenger-search-create/',
      token,
      body: { query: 'shared' },
    });
    expect(created.statusCode, created.body).toBe(200);
    const id = (created.json() as SearchResponseBody).search_history_id;
    await t.container.limits.setOverride(orgId, serviceScope('messenger-search-history'), 'day', 3);

    const urls = [
      HISTORY_PATH,
      `/service/messenger-search-history-results/${id}/`,
      `/service/messenger-search-history-export/${id}/?format=json`,
    ];
    const remaining: number[] = [];
    for (const url of urls) {
      const response = await t.request({ method: 'GET', url, token });
      expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
      expect(rateHeaders(response).limit).toBe(3);
      remaining.push(rateHeaders(response).remaining!);
    }
    expect(remaining).toEqual([2, 1, 0]);
    for (const url of urls) expect(expectRateLimited(await t.request({ method: 'GET', url, token })).limit).toBe(3);
    expect(dailyOf(await usage(t, token), 'messenger-search-history')).toMatchObject({ used: 3, remaining: 0 });
  });

  it('a refused search does not run: nothing is recorded in history', async () => {
    const { token, orgId } = await newMember(t, 'Refused Search');
    await t.container.limits.setOverride(orgId, serviceScope('messenger-search-create'), 'day', 1);
    const search = (query: string) =>
      t.request({ method: 'POST', url: '/service/messenger-search-create/', token, body: { query } });

    expect((await search('admitted')).statusCode).toBe(200);
    expectRateLimited(await search('refused'));
    expectRateLimited(await search('refused again'));

    const history = await t.request({ method: 'GET', url: HISTORY_PATH, token });
    expect(history.statusCode).toBe(200);
    const body = history.json() as ListBody<HistoryItemBody>;
    expect(body.total).toBe(1);
    expect(body.items.map((i) => i.query)).toEqual(['admitted']);
  });

  it('concurrent requests never both take the last unit', async () => {
    const { token, orgId } = await newMember(t, 'Concurrent');
    await t.container.limits.setOverride(orgId, ACCOUNT_SCOPE, 'second', null);
    await t.container.limits.setOverride(orgId, serviceScope('messenger-channels'), 'day', 5);
    await t.container.limits.setOverride(orgId, ACCOUNT_SCOPE, 'month', 12);

    const burst = (url: string, n: number) => Array.from({ length: n }, () => t.request({ method: 'GET', url, token }));
    const channels = (await Promise.all(burst(CHANNELS_PATH, 20))).map((r) => r.statusCode);
    expect(channels.filter((s) => s === 200)).toHaveLength(5);
    expect(channels.filter((s) => s === 429)).toHaveLength(15);

    // The account bucket under contention from two endpoints at once: 7 of the 12 are left.
    const mixed = (await Promise.all([...burst(CATEGORIES_PATH, 10), ...burst(ACCOUNT_PATH, 10)])).map(
      (r) => r.statusCode,
    );
    expect(mixed.filter((s) => s === 200)).toHaveLength(7);
    expect(mixed.filter((s) => s === 429)).toHaveLength(13);

    await t.container.limits.setOverride(orgId, ACCOUNT_SCOPE, 'month', null);
    const report = await usage(t, token);
    expect(dailyOf(report, 'messenger-channels').used).toBe(5);
    expect(dailyOf(report, 'messenger-channels-categories').used + dailyOf(report, 'account').used).toBe(7);
  });

  it('unauthenticated requests are refused before the limiter and not counted', async () => {
    const { token } = await newMember(t, 'Anonymous');
    for (let i = 0; i < 3; i++) expect((await t.request({ method: 'GET', url: CHANNELS_PATH })).statusCode).toBe(401);
    expect((await t.request({ method: 'GET', url: CHANNELS_PATH, token: 'not-a-token' })).statusCode).toBe(401);
    const report = await usage(t, token);
    expect(dailyOf(report, 'messenger-channels').used).toBe(0);
    expect(totalOf(report, '1 Month').used).toBe(1);
  });

  it('an endpoint limit of none removes that bucket and its headers; the account window still applies', async () => {
    const { token, orgId } = await newMember(t, 'Unlimited Endpoint');
    await t.container.limits.setOverride(orgId, serviceScope('account'), 'day', null);
    const response = await t.request({ method: 'GET', url: ACCOUNT_PATH, token });
    expect(response.statusCode).toBe(200);
    expect(rateHeaders(response)).toMatchObject({
      limit: undefined,
      remaining: undefined,
      reset: undefined,
      accountLimit: 100_000,
      accountRemaining: 99_999,
    });
    expect(blockOf(await usage(t, token), 'account').limits).toEqual([]);
  });

  it('rate limiting does not touch used_credits', async () => {
    const { token } = await newMember(t, 'Credits');
    const credits = async () => {
      const response = await t.request({ method: 'GET', url: '/service/organization/', token });
      expect(response.statusCode).toBe(200);
      return (response.json() as { used_credits: number }).used_credits;
    };
    const before = await credits();
    await getTimes(t, token, CHANNELS_PATH, 3);
    await t.request({ method: 'POST', url: '/service/messenger-search-create/', token, body: { query: 'credits' } });
    await t.request({ method: 'POST', url: '/service/messenger-search-create/', token, body: {} });
    expect(await credits()).toBe(before);
    expect(before).toBe(0);
  });
});
