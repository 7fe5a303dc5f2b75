import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/lib/clock.ts';
import { ACCOUNT_SCOPE, serviceScope } from '../../src/modules/usage/limits.ts';
import { expectError } from '../support/http.ts';
import {
  ACCOUNT_PATH,
  CATEGORIES_PATH,
  CHANNELS_PATH,
  REDIS_PREFIX,
  REDIS_URL,
  createOrgWithRandomId,
  dailyOf,
  deleteRedisCounters,
  expectRateLimited,
  getTimes,
  newMember,
  rateHeaders,
  redisCounterKeys,
  redisReachable,
  totalOf,
  usage,
} from '../support/rate-limits.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';
import { waitFor } from '../support/wait.ts';

/**
 * DRAGNET_REDIS_URL: the counts live in Redis (atomic Lua scripts), shared by every API process.
 * Skipped when no Redis answers at DRAGNET_TEST_REDIS_URL (default redis://127.0.0.1:6379).
 *
 * Key hygiene: counter keys are "dragnet:rl:<org id>|<scope>|<period>|<window start>" and every
 * fresh test store numbers its organizations from 1, so each organization here gets a random
 * large id (no other test store or run can share its keys), and its keys are deleted after.
 * The clock is set in the future (2091): Redis expires keys by its own wall clock.
 */

const redisUp = await redisReachable();
const env = { DRAGNET_REDIS_URL: REDIS_URL };
const DAY = Date.UTC(2091, 4, 10);
const NOW = '2091-05-10T09:00:00.000Z';

/** A member of a new organization under a random id. */
async function randomOrgMember(t: TestApp, org: string) {
  const orgId = await createOrgWithRandomId(t.container, org);
  const member = await newMember(t, org);
  expect(member.orgId).toBe(orgId);
  return member;
}

async function redisGet(key: string): Promise<string | null> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
  try {
    return await redis.get(key);
  } finally {
    await redis.quit();
  }
}

describe.skipIf(!redisUp)(`rate limits on Redis (${testEngine} store)`, () => {
  let t: TestApp;
  const orgIds: number[] = [];
  const member = async (org: string) => {
    const m = await randomOrgMember(t, org);
    orgIds.push(m.orgId);
    return m;
  };

  beforeAll(async () => {
    t = await createTestApp({ env, clock: createManualClock(NOW) });
  });
  afterAll(async () => {
    await t?.close();
    await deleteRedisCounters(orgIds);
  });

  it('counts go to Redis, one key per bucket and window, not to the store', async () => {
    const { token, orgId } = await member('Redis Keys');
    expect(await getTimes(t, token, CHANNELS_PATH, 2)).toEqual([200, 200]);

    const month = Date.UTC(2091, 4, 1);
    const second = Date.parse(NOW);
    expect(await redisCounterKeys(orgId)).toEqual(
      [
        `${orgId}|account|month|${month}`,
        `${orgId}|account|second|${second}`,
        `${orgId}|service:messenger-channels|day|${DAY}`,
      ]
        .map((k) => REDIS_PREFIX + k)
        .sort(),
    );
    expect(await redisGet(`${REDIS_PREFIX}${orgId}|service:messenger-channels|day|${DAY}`)).toBe('2');
    expect(await redisGet(`${REDIS_PREFIX}${orgId}|account|month|${month}`)).toBe('2');
    const stored = await t.container.store.db
      .selectFrom('rate_counters')
      .select('key')
      .where('key', 'like', `${orgId}|%`)
      .execute();
    expect(stored).toEqual([]);
  });

  it('an exhausted daily limit answers 429, and refusals are not counted', async () => {
    const { token, orgId } = await member('Redis Daily');
    await t.container.limits.setOverride(orgId, serviceScope('messenger-channels'), 'day', 2);
    expect(await getTimes(t, token, CHANNELS_PATH, 5)).toEqual([200, 200, 429, 429, 429]);
    const refused = await t.request({ method: 'GET', url: CHANNELS_PATH, token });
    expect(expectRateLimited(refused)).toMatchObject({
      limit: 2,
      reset_at: '2091-05-11T00:00:00.000Z',
      retry_after_seconds: 15 * 3600,
    });
    expect(await redisGet(`${REDIS_PREFIX}${orgId}|service:messenger-channels|day|${DAY}`)).toBe('2');
    const report = await usage(t, token);
    expect(dailyOf(report, 'messenger-channels')).toMatchObject({ used: 2, remaining: 0 });
    expect(totalOf(report, '1 Month').used).toBe(3);
  });

  it('failed calls are refunded', async () => {
    const { token, orgId } = await member('Redis Refund');
    await t.container.limits.setOverride(orgId, serviceScope('messenger-channels'), 'day', 1);
    for (let i = 0; i < 3; i++) {
      const response = await t.request({ method: 'GET', url: `${CHANNELS_PATH}?page_size=0`, token });
      expectError(response, 400);
      expect(rateHeaders(response)).toMatchObject({ limit: 1, remaining: 1 });
    }
    expect(await redisGet(`${REDIS_PREFIX}${orgId}|service:messenger-channels|day|${DAY}`)).toBe('0');
    expect(await getTimes(t, token, CHANNELS_PATH, 2)).toEqual([200, 429]);
  });

  it('an exhausted account-wide cap blocks every endpoint', async () => {
    const { token, orgId } = await member('Redis Account');
    await t.container.limits.setOverride(orgId, ACCOUNT_SCOPE, 'month', 2);
    expect(await getTimes(t, token, CHANNELS_PATH, 2)).toEqual([200, 200]);
    for (const url of [CATEGORIES_PATH, ACCOUNT_PATH]) {
      expect(expectRateLimited(await t.request({ method: 'GET', url, token }))).toMatchObject({
        limit: 2,
        reset_at: '2091-06-01T00:00:00.000Z',
      });
    }
  });

  it('the daily window ends at UTC midnight', async () => {
    const { email, orgId } = await member('Redis Midnight');
    await t.container.limits.setOverride(orgId, serviceScope('messenger-channels'), 'day', 1);
    t.clock.set('2091-05-10T23:59:59.000Z');
    const { access: token } = await t.login(email);
    expect(await getTimes(t, token, CHANNELS_PATH, 1)).toEqual([200]);
    t.clock.set('2091-05-10T23:59:59.999Z');
    expect(expectRateLimited(await t.request({ method: 'GET', url: CHANNELS_PATH, token }))).toMatchObject({
      retry_after_seconds: 1,
    });
    t.clock.set('2091-05-11T00:00:00.000Z');
    expect(rateHeaders(await t.request({ method: 'GET', url: CHANNELS_PATH, token }))).toMatchObject({
      limit: 1,
      remaining: 0,
      reset: 86_400,
    });
    t.clock.set(NOW);
  });

  it('concurrent requests never both take the last unit', async () => {
    const { token, orgId } = await member('Redis Concurrent');
    await t.container.limits.setOverride(orgId, ACCOUNT_SCOPE, 'second', null);
    await t.container.limits.setOverride(orgId, serviceScope('messenger-channels'), 'day', 5);
    const statuses = (
      await Promise.all(Array.from({ length: 30 }, () => t.request({ method: 'GET', url: CHANNELS_PATH, token })))
    ).map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(25);
    expect(await redisGet(`${REDIS_PREFIX}${orgId}|service:messenger-channels|day|${DAY}`)).toBe('5');
  });
});

describe.skipIf(!redisUp)(`Redis counters leased to a busy process (${testEngine} store)`, () => {
  let t: TestApp;
  const orgIds: number[] = [];
  const channelsDay = (orgId: number) => `${REDIS_PREFIX}${orgId}|service:messenger-channels|day|${DAY}`;

  beforeAll(async () => {
    t = await createTestApp({ env, clock: createManualClock(NOW) });
  });
  afterAll(async () => {
    await t?.close();
    await deleteRedisCounters(orgIds);
  });

  /** A member whose only limits are the endpoint's `daily` and the account's `monthly`. */
  async function busyMember(org: string, daily: number, monthly: number) {
    const m = await randomOrgMember(t, org);
    orgIds.push(m.orgId);
    await t.container.limits.setOverride(m.orgId, ACCOUNT_SCOPE, 'second', null);
    await t.container.limits.setOverride(m.orgId, ACCOUNT_SCOPE, 'month', monthly);
    await t.container.limits.setOverride(m.orgId, serviceScope('messenger-channels'), 'day', daily);
    return m;
  }

  it('far below the limits, every response still counts exactly one unit', async () => {
    const { token, orgId } = await busyMember('Redis Lease Headers', 100_000, 1_000_000);
    const remaining: number[] = [];
    const accountRemaining: number[] = [];
    for (let i = 0; i < 200; i++) {
      const response = await t.request({ method: 'GET', url: CHANNELS_PATH, token });
      expect(response.statusCode).toBe(200);
      const headers = rateHeaders(response);
      remaining.push(headers.remaining!);
      accountRemaining.push(headers.accountRemaining!);
    }
    expect(remaining).toEqual(Array.from({ length: 200 }, (_, i) => 100_000 - 1 - i));
    expect(accountRemaining).toEqual(Array.from({ length: 200 }, (_, i) => 1_000_000 - 1 - i));
    // Units leased to this process but not used are not reported as used...
    const report = await usage(t, token, '?service_slug=messenger-channels');
    expect(dailyOf(report, 'messenger-channels')).toMatchObject({ used: 200, remaining: 100_000 - 200 });
    expect(totalOf(report, '1 Month').used).toBe(201);
    // ...and go back to Redis within two lease periods (0.5 s).
    await waitFor('the unused leased units back in Redis', async () => (await redisGet(channelsDay(orgId))) === '200');
  });

  it('a refund while leasing is given back with the lease', async () => {
    const { token, orgId } = await busyMember('Redis Lease Refund', 100_000, 1_000_000);
    expect(await getTimes(t, token, CHANNELS_PATH, 50)).toEqual(Array(50).fill(200));
    for (let i = 0; i < 5; i++)
      expectError(await t.request({ method: 'GET', url: `${CHANNELS_PATH}?page_size=0`, token }), 400);
    expect(await getTimes(t, token, CHANNELS_PATH, 10)).toEqual(Array(10).fill(200));
    await waitFor('the lease and the refunds back in Redis', async () => (await redisGet(channelsDay(orgId))) === '60');
  });

  it('as a limit comes near, leases shrink and stop: exactly the limit is admitted', async () => {
    const limit = 3_000;
    const { token, orgId } = await busyMember('Redis Lease Limit', limit, 1_000_000);
    const statuses: number[] = [];
    // 16 clients at once, well past the limit.
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let i = 0; i < 200; i++)
          statuses.push((await t.request({ method: 'GET', url: CHANNELS_PATH, token })).statusCode);
      }),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(limit);
    expect(statuses.filter((s) => s === 429)).toHaveLength(16 * 200 - limit);
    expect(dailyOf(await usage(t, token, '?service_slug=messenger-channels'), 'messenger-channels')).toMatchObject({
      used: limit,
      remaining: 0,
    });
    expect(await redisGet(channelsDay(orgId))).toBe(String(limit));
  });
});

describe(`Redis unreachable (${testEngine} store)`, () => {
  it('a limited request answers 503 with Retry-After, not a 500, and nothing else is affected', async () => {
    // Nothing listens on port 1.
    const t = await createTestApp({ env: { DRAGNET_REDIS_URL: 'redis://127.0.0.1:1' }, clock: createManualClock(NOW) });
    try {
      const { token } = await newMember(t, 'Redis Down');
      const response = await t.request({ method: 'GET', url: ACCOUNT_PATH, token });
      expect(expectError(response, 503, 'service_unavailable').message).toMatch(/rate-limit counters are unavailable/);
      expect(response.headers['retry-after']).toBe('1');
      // Routes outside /service/ do not count against limits.
      expect((await t.request({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});

describe.skipIf(!redisUp)(`Redis counts across a restart (${testEngine} store)`, () => {
  let location: TestStoreLocation;
  const clock = createManualClock(NOW);
  let orgId = 0;

  beforeAll(async () => {
    location = await createTestStoreLocation();
  });
  afterAll(async () => {
    await location?.drop();
    if (orgId) await deleteRedisCounters([orgId]);
  });

  it('a new process on the same Redis sees the counts', async () => {
    let email = '';
    const first = await createTestApp({ location, clock, env });
    try {
      const m = await randomOrgMember(first, 'Redis Restart');
      orgId = m.orgId;
      email = m.email;
      await first.container.limits.setOverride(orgId, serviceScope('messenger-channels'), 'day', 3);
      expect(await getTimes(first, m.token, CHANNELS_PATH, 2)).toEqual([200, 200]);
    } finally {
      await first.close();
    }

    const second = await createTestApp({ location, clock, env });
    try {
      const { access } = await second.login(email);
      expect(dailyOf(await usage(second, access), 'messenger-channels')).toMatchObject({
        limit: 3,
        used: 2,
        remaining: 1,
      });
      expect(await getTimes(second, access, CHANNELS_PATH, 2)).toEqual([200, 429]);
    } finally {
      await second.close();
    }
  });
});

describe.skipIf(!redisUp)(`Redis counters and the API's clock (${testEngine} store)`, () => {
  let t: TestApp;
  let orgId = 0;

  beforeAll(async () => {
    // The harness's usual clock (2026-03-10), which is behind the Redis server's wall clock.
    t = await createTestApp({ env, clock: createManualClock('2026-03-10T09:00:00.000Z') });
  });
  afterAll(async () => {
    await t?.close();
    if (orgId) await deleteRedisCounters([orgId]);
  });

  it('a limit holds even when the API clock and the Redis clock disagree by more than a minute', async () => {
    const m = await randomOrgMember(t, 'Redis Skew');
    orgId = m.orgId;
    await t.container.limits.setOverride(orgId, serviceScope('messenger-channels'), 'day', 1);
    expect(await getTimes(t, m.token, CHANNELS_PATH, 3)).toEqual([200, 429, 429]);
  });
});
