import { Redis } from 'ioredis';
import type { Clock } from '../../../lib/clock.ts';
import type { CounterSlot, CounterStore, ReserveOutcome } from './counter-store.ts';

// Reservations of many requests in one call. KEYS: every reservation's bucket keys, one
// reservation after the other; ARGV: per reservation its number of buckets n, its n limits,
// then its n lifetimes in ms. Each reservation checks every bucket, then increments all of them
// (or none: {-i, count} names the first full one). Redis runs the script atomically and the
// reservations in order, so concurrent requests from any number of API processes can never
// both take the last unit: the same as one call per request, in one round trip for all.
const RESERVE_MANY = `
local results = {}
local k = 0
local a = 1
while a <= #ARGV do
  local n = tonumber(ARGV[a])
  local refused = nil
  for i = 1, n do
    local count = tonumber(redis.call('GET', KEYS[k + i]) or '0')
    if count >= tonumber(ARGV[a + i]) then
      refused = {-i, count}
      break
    end
  end
  if refused then
    results[#results + 1] = refused
  else
    local counts = {}
    for i = 1, n do
      counts[i] = redis.call('INCR', KEYS[k + i])
      if counts[i] == 1 then redis.call('PEXPIRE', KEYS[k + i], ARGV[a + n + i]) end
    end
    results[#results + 1] = counts
  end
  k = k + n
  a = a + 2 * n + 1
end
return results`;

const RELEASE = `
for i = 1, #KEYS do
  local count = tonumber(redis.call('GET', KEYS[i]) or '0')
  if count > 0 then redis.call('DECR', KEYS[i]) end
end
return 1`;

const PREFIX = 'dragnet:rl:';
/** Reservations sent in one script call at most; more wait for the next. */
const MAX_BATCH = 256;

type ScriptCall<T> = (numberOfKeys: number, ...args: (string | number)[]) => Promise<T>;

interface Pending {
  slots: CounterSlot[];
  resolve(outcome: ReserveOutcome): void;
  reject(error: unknown): void;
}

const outcomeOf = (result: number[]): ReserveOutcome =>
  result[0]! < 0 ? { ok: false, index: -result[0]! - 1, count: result[1]! } : { ok: true, counts: result };

/**
 * Counts in Redis, shared by every API process. A Redis command per request cost more than the
 * rest of a cached request (CPU in ioredis and in Redis, one round trip each): the reservations
 * asked for in one turn of the event loop (the requests read from the sockets together) go in
 * one script call, sent when the turn ends (setImmediate).
 *
 * Lifetimes are relative (PEXPIRE), computed from Dragnet's clock: an absolute expiry taken from
 * our clock would be in the past for Redis whenever the two clocks disagree, and Redis would
 * drop the count at once.
 */
export function createRedisCounters(deps: { url: string; clock: Clock }): CounterStore {
  const redis = new Redis(deps.url, { maxRetriesPerRequest: 2 });
  // defineCommand sends each script once and then calls it by its SHA.
  redis.defineCommand('dragnetReserveMany', { lua: RESERVE_MANY });
  redis.defineCommand('dragnetRelease', { lua: RELEASE });
  const scripts = redis as unknown as { dragnetReserveMany: ScriptCall<number[][]>; dragnetRelease: ScriptCall<number> };
  const keyed = (keys: string[]) => keys.map((k) => PREFIX + k);

  const queue: Pending[] = [];
  const send = () => {
    const batch = queue.splice(0, MAX_BATCH);
    if (queue.length) setImmediate(send);
    const keys: string[] = [];
    const args: number[] = [];
    // Alive until a minute past the window end, so a late refund still finds its key.
    const now = deps.clock.now().getTime();
    for (const { slots } of batch) {
      args.push(slots.length);
      for (const slot of slots) {
        keys.push(PREFIX + slot.key);
        args.push(slot.limit);
      }
      for (const slot of slots) args.push(Math.max(1, slot.expiresAt - now) + 60_000);
    }
    scripts.dragnetReserveMany(keys.length, ...keys, ...args).then(
      (results) => batch.forEach((pending, i) => pending.resolve(outcomeOf(results[i]!))),
      (error: unknown) => batch.forEach((pending) => pending.reject(error)),
    );
  };

  return {
    reserve(slots: CounterSlot[]): Promise<ReserveOutcome> {
      return new Promise((resolve, reject) => {
        if (queue.length === 0) setImmediate(send);
        queue.push({ slots, resolve, reject });
      });
    },

    async release(keys: string[]): Promise<void> {
      if (keys.length) await scripts.dragnetRelease(keys.length, ...keyed(keys));
    },

    async read(keys: string[]): Promise<number[]> {
      if (keys.length === 0) return [];
      const values = await redis.mget(...keyed(keys));
      return values.map((v) => Number(v ?? 0));
    },

    async close(): Promise<void> {
      await redis.quit();
    },
  };
}
