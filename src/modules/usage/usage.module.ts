import type { Store } from '../../db/store.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Log } from '../../lib/log.ts';
import type { CounterStore } from './counters/counter-store.ts';
import { createEmbeddedCounters } from './counters/embedded-counters.ts';
import { createPostgresCounters } from './counters/postgres-counters.ts';
import { createLimitResolver } from './limits.ts';
import { createRateLimiter } from './rate-limiter.ts';
import { createUsageCatalog } from './usage-catalog.ts';
import { usageRoutes } from './usage.routes.ts';

/**
 * Counts live in Redis when DRAGNET_REDIS_URL is set (several API processes), else in
 * PostgreSQL rows when the store is PostgreSQL, else in the embedded process's memory with
 * write-behind to SQLite.
 */
async function createCounters(deps: {
  store: Store;
  clock: Clock;
  redisUrl?: string;
  log: Log;
}): Promise<CounterStore> {
  if (deps.redisUrl) {
    // ioredis is loaded only by processes configured for Redis.
    const { createRedisCounters } = await import('./counters/redis-counters.ts');
    return createRedisCounters({ url: deps.redisUrl, clock: deps.clock, log: deps.log });
  }
  if (deps.store.engine === 'postgres') return createPostgresCounters({ db: deps.store.db, clock: deps.clock });
  return createEmbeddedCounters({ db: deps.store.db, clock: deps.clock, log: deps.log });
}

export async function createUsageModule(deps: { store: Store; clock: Clock; redisUrl?: string; log: Log }) {
  const limits = createLimitResolver({ db: deps.store.db, clock: deps.clock });
  const limiter = createRateLimiter({ counters: await createCounters(deps), limits, clock: deps.clock });
  const catalog = createUsageCatalog();
  return { limits, limiter, catalog, routes: usageRoutes({ limiter, limits, catalog }) };
}
