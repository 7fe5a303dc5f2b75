import { randomInt } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import { expect } from 'vitest';
import type { Container } from '../../src/container.ts';
import type { TestApp } from './test-app.ts';

/** Rate-limit test helpers: the usage report's shape, request loops, Redis key hygiene. */

export interface LimitEntryBody {
  period: string;
  limit: number;
  used: number;
  remaining: number;
  reset_seconds: number;
}

export interface ServiceBlockBody {
  feature: string;
  service_name: string;
  service_slug: string;
  limits: LimitEntryBody[];
}

export interface UsageBody {
  total?: LimitEntryBody[];
  services: ServiceBlockBody[];
}

export interface RateLimitedBody {
  code: string;
  message: string;
  retry_after_seconds: number;
  limit: number;
  remaining: number;
  reset_at: string;
  request_id: string;
}

export const USAGE_PATH = '/service/get_usage_limits/';
export const CHANNELS_PATH = '/service/messenger-channels/';
export const CATEGORIES_PATH = '/service/messenger-channels-categories/';
export const HISTORY_PATH = '/service/messenger-search-history/';
export const ACCOUNT_PATH = '/service/account/';

/** GET the usage report (query as a string such as `service_slug=chan`); must be 200. */
export async function usage(t: TestApp, token: string, query = ''): Promise<UsageBody> {
  const response = await t.request({ method: 'GET', url: `${USAGE_PATH}${query ? `?${query}` : ''}`, token });
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as UsageBody;
}

/** The limit entries of one service block of a report (throws when the block is missing). */
export function blockOf(report: UsageBody, slug: string): ServiceBlockBody {
  const block = report.services.find((s) => s.service_slug === slug);
  if (!block) throw new Error(`no service block ${slug} in ${report.services.map((s) => s.service_slug).join(', ')}`);
  return block;
}

/** The `1 Day` entry of a service block. */
export const dailyOf = (report: UsageBody, slug: string): LimitEntryBody => {
  const entry = blockOf(report, slug).limits.find((l) => l.period === '1 Day');
  if (!entry) throw new Error(`no 1 Day entry for ${slug}`);
  return entry;
};

/** An account-wide (`total`) entry by its period label. */
export const totalOf = (report: UsageBody, period: '1 Second' | '1 Month'): LimitEntryBody => {
  const entry = report.total?.find((l) => l.period === period);
  if (!entry) throw new Error(`no total ${period} entry in ${JSON.stringify(report.total)}`);
  return entry;
};

/** GETs `url` `times` times in sequence and returns the status codes. */
export async function getTimes(t: TestApp, token: string, url: string, times: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < times; i++) statuses.push((await t.request({ method: 'GET', url, token })).statusCode);
  return statuses;
}

/** Asserts a 429 with the spec 7 body and Retry-After; returns the body. */
export function expectRateLimited(response: LightMyRequestResponse): RateLimitedBody {
  expect(response.statusCode, response.body).toBe(429);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  const body = response.json() as RateLimitedBody;
  expect(body).toMatchObject({
    message: expect.any(String),
    retry_after_seconds: expect.any(Number),
    limit: expect.any(Number),
    remaining: 0,
    reset_at: expect.any(String),
  });
  expect(Number.isInteger(body.retry_after_seconds)).toBe(true);
  expect(body.retry_after_seconds).toBeGreaterThanOrEqual(1);
  expect(body.reset_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/);
  expect(response.headers['retry-after']).toBe(String(body.retry_after_seconds));
  return body;
}

/** The X-RateLimit-* headers of a response as numbers (undefined when absent). */
export function rateHeaders(response: LightMyRequestResponse | Response) {
  const get = (name: string): number | undefined => {
    const raw = response instanceof Response ? response.headers.get(name) : response.headers[name];
    return raw === undefined || raw === null ? undefined : Number(raw);
  };
  return {
    limit: get('x-ratelimit-limit'),
    remaining: get('x-ratelimit-remaining'),
    reset: get('x-ratelimit-reset'),
    accountLimit: get('x-ratelimit-account-limit'),
    accountRemaining: get('x-ratelimit-account-remaining'),
    accountReset: get('x-ratelimit-account-reset'),
  };
}

/** Seconds from `now` until `end`, rounded up, as the API reports them. */
export const secondsBetween = (now: string, end: string): number =>
  Math.ceil((Date.parse(end) - Date.parse(now)) / 1000);

/**
 * Creates an organization under a random large id. Redis counter keys are "<org id>|…" and
 * every fresh test store numbers its organizations from 1, so tests sharing one Redis (other
 * files, other runs) would count into each other's buckets; a random id keeps them apart.
 */
export async function createOrgWithRandomId(container: Container, name: string): Promise<number> {
  const id = 1_000_000_000 + randomInt(1_000_000_000);
  const now = container.clock.now().getTime();
  await container.store.db
    .insertInto('organizations')
    .values({
      id,
      name,
      alert_rule_limit: 20,
      default_frequency: 'daily',
      dashboard_url: null,
      managed_by_org_id: null,
      created_at: now,
      updated_at: now,
    } as never)
    .execute();
  return id;
}

export const REDIS_URL = process.env.DRAGNET_TEST_REDIS_URL || 'redis://127.0.0.1:6379';
export const REDIS_PREFIX = 'dragnet:rl:';

/** Whether a Redis server answers PING at REDIS_URL (tests needing it are skipped otherwise). */
export async function redisReachable(url = REDIS_URL): Promise<boolean> {
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 10_000,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

/** Deletes every rate-limit counter key of these organizations from Redis; returns how many. */
export async function deleteRedisCounters(orgIds: number[], url = REDIS_URL): Promise<number> {
  const redis = new Redis(url, { maxRetriesPerRequest: 2 });
  try {
    let deleted = 0;
    for (const orgId of orgIds) {
      const keys: string[] = [];
      const stream = redis.scanStream({ match: `${REDIS_PREFIX}${orgId}|*`, count: 1000 });
      for await (const batch of stream) keys.push(...(batch as string[]));
      if (keys.length) deleted += await redis.del(...keys);
    }
    return deleted;
  } finally {
    await redis.quit();
  }
}

/** The Redis counter keys of one organization, sorted. */
export async function redisCounterKeys(orgId: number, url = REDIS_URL): Promise<string[]> {
  const redis = new Redis(url, { maxRetriesPerRequest: 2 });
  try {
    const keys: string[] = [];
    for await (const batch of redis.scanStream({ match: `${REDIS_PREFIX}${orgId}|*`, count: 1000 }))
      keys.push(...(batch as string[]));
    return keys.sort();
  } finally {
    await redis.quit();
  }
}

/** A member of a new organization `org` (created on demand), logged in. */
export async function newMember(
  t: TestApp,
  org: string,
  role?: 'member' | 'system',
): Promise<{ token: string; orgId: number; email: string }> {
  const slug = org.toLowerCase().replace(/[^a-z0-9]+/g, '-');
  const email = `user@${slug}.test`;
  const user = await t.createUser({ org, email, role });
  const { access } = await t.login(email);
  return { token: access, orgId: user.org_id, email };
}
