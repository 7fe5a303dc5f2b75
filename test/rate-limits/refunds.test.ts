import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT_SCOPE, serviceScope } from '../../src/modules/usage/limits.ts';
import { expectError } from '../support/http.ts';
import type { SearchResponseBody } from '../support/messenger-search.ts';
import {
  CATEGORIES_PATH,
  CHANNELS_PATH,
  dailyOf,
  expectRateLimited,
  newMember,
  rateHeaders,
  totalOf,
  usage,
} from '../support/rate-limits.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

/**
 * Spec 7: failed calls (non-2xx) are refunded and do not count against limits. A request
 * reserves a unit of each bucket before its handler runs and gives it back on any non-2xx:
 * validation (400), another organization's resource (404), a handler that throws (500).
 */

const SEARCH = '/service/messenger-search-create/';
const EXPLODE = '/service/explode/';

describe(`rate-limit refunds (${testEngine})`, () => {
  let t: TestApp;
  let explosions = 0;

  beforeAll(async () => {
    t = await createTestApp();
    // A route whose handler throws, added before the app is ready so the real plugins (auth,
    // rate limiting, error handling) wrap it exactly as they wrap every /service/ route.
    t.app.get(EXPLODE, { config: { rateLimit: { service: 'explode', name: 'Explode' } } }, async () => {
      explosions++;
      throw new Error('handler failed');
    });
    t.clock.set('2026-03-10T09:00:00.000Z');
  });
  afterAll(() => t.close());

  it('a 400 (validation) is refunded: its headers show the unit given back and a later request still fits', async () => {
    const { token, orgId } = await newMember(t, 'Bad Input');
    await t.container.limits.setOverride(orgId, serviceScope('messenger-search-create'), 'day', 1);

    for (const body of [{}, { query: 'x', page: 0 }, { query: 42 }]) {
      const response = await t.request({ method: 'POST', url: SEARCH, token, body });
      expectError(response, 400);
      expect(rateHeaders(response)).toMatchObject({ limit: 1, remaining: 1, accountRemaining: 100_000 });
    }
    const badQuery = await t.request({ method: 'GET', url: `${CHANNELS_PATH}?page_size=0`, token });
    expectError(badQuery, 400);
    expect(rateHeaders(badQuery)).toMatchObject({ limit: 1000, remaining: 1000 });

    let report = await usage(t, token);
    expect(dailyOf(report, 'messenger-search-create')).toMatchObject({ used: 0, remaining: 1 });
    expect(dailyOf(report, 'messenger-channels').used).toBe(0);
    expect(totalOf(report, '1 Month').used).toBe(1); // the report itself

    // The one unit is still there: one search is admitted, the next refused.
    expect((await t.request({ method: 'POST', url: SEARCH, token, body: { query: 'fits' } })).statusCode).toBe(200);
    expectRateLimited(await t.request({ method: 'POST', url: SEARCH, token, body: { query: 'over' } }));
    report = await usage(t, token);
    expect(dailyOf(report, 'messenger-search-create')).toMatchObject({ used: 1, remaining: 0 });
  });

  it("a 404 for another organization's history id is refunded", async () => {
    const owner = await newMember(t, 'History Owner');
    const stranger = await newMember(t, 'History Stranger');
    const created = await t.request({ method: 'POST', url: SEARCH, token: owner.token, body: { query: 'private' } });
    expect(created.statusCode).toBe(200);
    const id = (created.json() as SearchResponseBody).search_history_id;
    await t.container.limits.setOverride(stranger.orgId, serviceScope('messenger-search-history'), 'day', 1);

    for (const url of [
      `/service/messenger-search-history-results/${id}/`,
      `/service/messenger-search-history-export/${id}/?format=csv`,
    ]) {
      for (let i = 0; i < 2; i++) {
        const response = await t.request({ method: 'GET', url, token: stranger.token });
        expectError(response, 404, 'not_found');
        expect(rateHeaders(response), url).toMatchObject({ limit: 1, remaining: 1 });
      }
    }
    const report = await usage(t, stranger.token);
    expect(dailyOf(report, 'messenger-search-history')).toMatchObject({ used: 0, remaining: 1 });
    expect(totalOf(report, '1 Month').used).toBe(1);

    // The unit is intact for the stranger's own history.
    expect(
      (await t.request({ method: 'GET', url: '/service/messenger-search-history/', token: stranger.token })).statusCode,
    ).toBe(200);
    expectRateLimited(
      await t.request({ method: 'GET', url: '/service/messenger-search-history/', token: stranger.token }),
    );
  });

  it('a handler that throws (500) is refunded, on its own bucket and on the account bucket', async () => {
    const { token, orgId } = await newMember(t, 'Exploding');
    await t.container.limits.setOverride(orgId, serviceScope('explode'), 'day', 1);
    await t.container.limits.setOverride(orgId, ACCOUNT_SCOPE, 'month', 2);
    const before = explosions;

    for (let i = 0; i < 4; i++) {
      const response = await t.request({ method: 'GET', url: EXPLODE, token });
      expectError(response, 500, 'internal_error');
      expect(rateHeaders(response)).toMatchObject({ limit: 1, remaining: 1, accountLimit: 2, accountRemaining: 2 });
    }
    // The handler did run every time (it was admitted), and nothing stayed counted.
    expect(explosions - before).toBe(4);
    const report = await usage(t, token);
    expect(dailyOf(report, 'explode')).toMatchObject({ limit: 1, used: 0, remaining: 1 });
    expect(totalOf(report, '1 Month')).toMatchObject({ limit: 2, used: 1 });
    // One account unit is left after the report: a real request takes it.
    expect((await t.request({ method: 'GET', url: CHANNELS_PATH, token })).statusCode).toBe(200);
    expectRateLimited(await t.request({ method: 'GET', url: CHANNELS_PATH, token }));
  });

  it('refunds racing admissions on the same buckets never fail a request', async () => {
    // Every 400 gives its units back while other requests of the organization reserve the same
    // buckets: a store that locks the rows in a different order for each would deadlock (500).
    const { token, orgId } = await newMember(t, 'Racing Refunds');
    await t.container.limits.setOverride(orgId, ACCOUNT_SCOPE, 'second', null);
    const responses = await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        t.request({ method: 'GET', url: i % 2 ? CHANNELS_PATH : `${CHANNELS_PATH}?page_size=0`, token }),
      ),
    );
    const byStatus: Record<number, number> = {};
    for (const r of responses) byStatus[r.statusCode] = (byStatus[r.statusCode] ?? 0) + 1;
    expect(byStatus).toEqual({ 200: 150, 400: 150 });
    const report = await usage(t, token);
    expect(dailyOf(report, 'messenger-channels').used).toBe(150);
    expect(totalOf(report, '1 Month').used).toBe(151);
  });

  it('a 2xx is kept: the count goes up by one per success', async () => {
    const { token } = await newMember(t, 'Kept');
    const response = await t.request({ method: 'GET', url: CATEGORIES_PATH, token });
    expect(response.statusCode).toBe(200);
    expect(rateHeaders(response)).toMatchObject({ limit: 1000, remaining: 999, accountRemaining: 99_999 });
    expect(dailyOf(await usage(t, token), 'messenger-channels-categories').used).toBe(1);
  });
});

describe(`rate-limit refund when a real handler's store query fails (${testEngine})`, () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('a 500 from GET messenger-channels-categories (its table is gone) is refunded', async () => {
    const { token } = await newMember(t, 'Broken Store');
    const ok = await t.request({ method: 'GET', url: CATEGORIES_PATH, token });
    expect(ok.statusCode).toBe(200);
    expect(rateHeaders(ok).remaining).toBe(999);

    // Break the store under the handler: the category listing query now fails.
    await t.container.store.db.schema.alterTable('categories').renameTo('categories_gone').execute();
    for (let i = 0; i < 3; i++) {
      const failed = await t.request({ method: 'GET', url: CATEGORIES_PATH, token });
      expectError(failed, 500, 'internal_error');
      expect(rateHeaders(failed)).toMatchObject({ limit: 1000, remaining: 999 });
    }
    const report = await usage(t, token);
    expect(dailyOf(report, 'messenger-channels-categories').used).toBe(1);
    expect(totalOf(report, '1 Month').used).toBe(2);
  });
});
