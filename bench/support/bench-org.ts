import { randomInt } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { loadConfig } from '../../src/config.ts';
import { createContainer } from '../../src/container.ts';
import { ACCOUNT_SCOPE, serviceScope } from '../../src/modules/usage/limits.ts';
import type { ChildServer } from './child-server.ts';
import { httpJson } from './http.ts';

/** The organization bench/support/servers.ts puts its user in. */
export const BENCH_ORG = 'Bench';
/** High enough never to refuse a benchmark request, yet counted like any finite limit. */
export const RAISED_LIMIT = 1_000_000_000;
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
const REDIS_PREFIX = 'dragnet:rl:';

/** Null when the server answers, else why not. */
export async function reachable(what: 'postgres' | 'redis', url: string): Promise<string | null> {
  try {
    if (what === 'postgres') {
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
      await client.connect();
      await client.end();
    } else {
      const redis = new Redis(url, {
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
        connectTimeout: 5_000,
      });
      redis.on('error', () => undefined);
      try {
        await redis.connect();
        await redis.ping();
      } finally {
        redis.disconnect();
      }
    }
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * Before a server starts on the store `env` names: the Bench organization under a random id
 * (Redis keys are "<org id>|…", and a fresh store would number it 1 like every other test or
 * bench store using that Redis), with its limits raised so the load never meets a 429: per
 * second and month, and the daily limit of each endpoint slug in `slugs`. `prepare` runs on the
 * same container (demo data, say).
 */
export async function prepareOrganization(
  env: NodeJS.ProcessEnv,
  slugs: string[],
  prepare?: (container: Awaited<ReturnType<typeof createContainer>>) => Promise<void>,
): Promise<number> {
  const container = await createContainer(loadConfig(env));
  try {
    const id = 1_000_000_000 + randomInt(1_000_000_000);
    const now = Date.now();
    await container.store.db
      .insertInto('organizations')
      .values({
        id,
        name: BENCH_ORG,
        alert_rule_limit: 20,
        default_frequency: 'daily',
        dashboard_url: null,
        managed_by_org_id: null,
        created_at: now,
        updated_at: now,
      } as never)
      .execute();
    await container.limits.setOverride(id, ACCOUNT_SCOPE, 'second', RAISED_LIMIT);
    await container.limits.setOverride(id, ACCOUNT_SCOPE, 'month', RAISED_LIMIT);
    for (const slug of slugs) await container.limits.setOverride(id, serviceScope(slug), 'day', RAISED_LIMIT);
    await prepare?.(container);
    return id;
  } finally {
    await container.close();
  }
}

export async function deleteRedisCounters(url: string, orgId: number): Promise<void> {
  const redis = new Redis(url, { maxRetriesPerRequest: 2 });
  try {
    const keys: string[] = [];
    for await (const batch of redis.scanStream({ match: `${REDIS_PREFIX}${orgId}|*`, count: 1000 }))
      keys.push(...(batch as string[]));
    if (keys.length) await redis.del(...keys);
  } finally {
    await redis.quit();
  }
}

/** Logs in as the user a `servers.ts dragnet` child created; its credentials and Authorization header. */
export async function logInBenchUser(server: ChildServer) {
  const { email, password } = server.info as unknown as { email: string; password: string };
  const login = await httpJson(`${server.url}/token/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  const access = (login.body as { access?: unknown } | null)?.access;
  if (login.status !== 200 || typeof access !== 'string')
    throw new Error(`login failed: ${login.status} ${JSON.stringify(login.body)}`);
  return { email, password, headers: { authorization: `Bearer ${access}` } };
}
