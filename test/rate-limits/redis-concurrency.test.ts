import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createContainer } from '../../src/container.ts';
import { ACCOUNT_SCOPE } from '../../src/modules/usage/limits.ts';
import { runCli } from '../support/cli.ts';
import {
  CATEGORIES_PATH,
  CHANNELS_PATH,
  REDIS_URL,
  USAGE_PATH,
  createOrgWithRandomId,
  dailyOf,
  deleteRedisCounters,
  redisReachable,
  type RateLimitedBody,
  type UsageBody,
} from '../support/rate-limits.ts';
import { startServer, type ServerProcess } from '../support/server-process.ts';
import { createTestStoreLocation, testDatabaseAdminUrl, type TestStoreLocation } from '../support/test-store.ts';
import { scaled, waitFor } from '../support/wait.ts';

/**
 * The proof that a limit is exact across API processes: four real servers (`npm start`) share
 * one PostgreSQL store, an organization's messenger-channels limit is 50 a day (per-second cap
 * lifted so it cannot interfere), and 200 requests are fired at once, spread over the four.
 * Exactly 50 are admitted and 150 refused, and the usage report reads 50. Then a larger limit
 * (2,000 a day of the channel categories) under sustained load from 64 clients, where Redis
 * leases units to the busy processes: never more than the limit is admitted, and once the
 * leases are given back exactly the limit. Run with the counts in Redis (DRAGNET_REDIS_URL)
 * and, without Redis, in PostgreSQL rows (dragnet_rate_reserve).
 *
 * Always on PostgreSQL (several processes cannot share the embedded store): the database is
 * created on DRAGNET_TEST_DATABASE_URL, or on the local default server when the suite runs on
 * the embedded store. Skipped when that server (or, for the Redis run, Redis) is unreachable.
 */

const ADMIN_URL = testDatabaseAdminUrl ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PROCESSES = 4;
const REQUESTS = 200;
const LIMIT = 50;
const LEASED_LIMIT = 2_000;
const PASSWORD = 'a long enough password for four servers';
// Generous: four servers start at once (migrations check) on a possibly busy machine.
const SLOW_MS = scaled(360_000);
const START_TIMEOUT_MS = scaled(240_000);

async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

const postgresUp = await postgresReachable();
const redisUp = await redisReachable();

async function stop(server: ServerProcess): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  const kill = setTimeout(() => server.child.kill('SIGKILL'), 10_000);
  server.child.kill('SIGTERM');
  await server.exited;
  clearTimeout(kill);
}

describe.each([
  { counters: 'redis' as const, skip: !postgresUp || !redisUp },
  { counters: 'postgres' as const, skip: !postgresUp },
])(`$counters counters: ${PROCESSES} API processes, one limit of ${LIMIT}`, ({ counters, skip }) => {
  let location: TestStoreLocation | undefined;
  const servers: ServerProcess[] = [];
  let orgId = 0;
  let token = '';
  const email = `load-${counters}@concurrency.test`;

  beforeAll(async () => {
    if (skip) return;
    location = await createTestStoreLocation({ adminUrl: ADMIN_URL });
    const env = { ...location.env, ...(counters === 'redis' ? { DRAGNET_REDIS_URL: REDIS_URL } : {}) };

    // The organization under a random id, so no other store's org shares its Redis keys. The
    // limits are set before any server starts, so no process holds older ones in its cache.
    // (Through the service: `org set-limits --per-second none` fails, see cli-limits.test.ts.)
    const container = await createContainer(loadConfig(env));
    try {
      orgId = await createOrgWithRandomId(container, 'Concurrency');
      await container.users.create({ orgName: 'Concurrency', email, password: PASSWORD });
      await container.limits.setOverride(orgId, ACCOUNT_SCOPE, 'second', null);
    } finally {
      await container.close();
    }
    const limits = await runCli(
      [
        'org',
        'set-limits',
        'Concurrency',
        '--service',
        `messenger-channels=${LIMIT}`,
        '--service',
        `messenger-channels-categories=${LEASED_LIMIT}`,
      ],
      { env },
    );
    expect(limits.code, limits.stderr).toBe(0);
    expect(limits.stdout).toMatch(/account\s+second\s+none/);
    expect(limits.stdout).toMatch(/service:messenger-channels\s+day\s+50/);

    // Each server is recorded as soon as it listens, so afterAll stops it even if another fails.
    await Promise.all(
      Array.from({ length: PROCESSES }, async () => {
        servers.push(await startServer({ ...env, HOST: '127.0.0.1', PORT: '0' }, START_TIMEOUT_MS));
      }),
    );
    expect(new Set(servers.map((s) => s.baseUrl)).size).toBe(PROCESSES);

    const login = await fetch(`${servers[0]!.baseUrl}/token/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(login.status).toBe(200);
    token = ((await login.json()) as { access: string }).access;
  }, SLOW_MS);

  afterAll(async () => {
    await Promise.all(servers.map(stop));
    await location?.drop();
    if (orgId && counters === 'redis') await deleteRedisCounters([orgId]);
  }, SLOW_MS);

  it.skipIf(skip)(
    `${REQUESTS} concurrent requests over ${PROCESSES} processes: exactly ${LIMIT} admitted, the rest 429, and the report reads ${LIMIT}`,
    async () => {
      const headers = { authorization: `Bearer ${token}` };
      const responses = await Promise.all(
        Array.from({ length: REQUESTS }, async (_, i) => {
          const response = await fetch(`${servers[i % PROCESSES]!.baseUrl}${CHANNELS_PATH}`, { headers });
          return { server: i % PROCESSES, status: response.status, body: (await response.json()) as unknown };
        }),
      );
      const admitted = responses.filter((r) => r.status === 200);
      const refused = responses.filter((r) => r.status === 429);
      expect({
        admitted: admitted.length,
        refused: refused.length,
        other: responses.length - admitted.length - refused.length,
      }).toEqual({
        admitted: LIMIT,
        refused: REQUESTS - LIMIT,
        other: 0,
      });
      for (const { body } of refused) expect(body as RateLimitedBody).toMatchObject({ limit: LIMIT, remaining: 0 });
      // The load really was spread over the processes (round robin), and each one counted into
      // the shared buckets: every process reports the same total below.
      expect(new Set(responses.map((r) => r.server)).size).toBe(PROCESSES);

      for (const server of servers) {
        const report = await fetch(`${server.baseUrl}${USAGE_PATH}?service_slug=messenger-channels`, { headers });
        expect(report.status).toBe(200);
        expect(dailyOf((await report.json()) as UsageBody, 'messenger-channels')).toMatchObject({
          limit: LIMIT,
          used: LIMIT,
          remaining: 0,
        });
      }
    },
    SLOW_MS,
  );

  it.skipIf(skip)(
    `a limit of ${LEASED_LIMIT} under sustained load from 16 clients per process: never exceeded, and reached exactly`,
    async () => {
      const headers = { authorization: `Bearer ${token}` };
      const get = async (server: ServerProcess) =>
        (await fetch(`${server.baseUrl}${CATEGORIES_PATH}`, { headers })).status;
      const statuses: number[] = [];
      await Promise.all(
        servers.flatMap((server) =>
          Array.from({ length: 16 }, async () => {
            for (let i = 0; i < 50; i++) statuses.push(await get(server));
          }),
        ),
      );
      const admitted = statuses.filter((s) => s === 200).length;
      expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
      expect(admitted).toBeLessThanOrEqual(LEASED_LIMIT);
      // Units another process held near the limit may have refused a request early; they are
      // given back within two lease periods (0.5 s), and then the rest can be taken: take what is
      // free until a refusal, again until the leases are back.
      let topUp = 0;
      let next = 0;
      await waitFor(
        'the leased units back and taken',
        async () => {
          for (let status; (status = await get(servers[next++ % PROCESSES]!)) !== 429; topUp++)
            expect(status).toBe(200);
          return admitted + topUp >= LEASED_LIMIT;
        },
        { everyMs: 100 },
      );
      expect(admitted + topUp).toBe(LEASED_LIMIT);
      for (const server of servers) {
        const report = await fetch(`${server.baseUrl}${USAGE_PATH}?service_slug=messenger-channels-categories`, {
          headers,
        });
        expect(dailyOf((await report.json()) as UsageBody, 'messenger-channels-categories')).toMatchObject({
          used: LEASED_LIMIT,
          remaining: 0,
        });
      }
    },
    SLOW_MS,
  );
});
