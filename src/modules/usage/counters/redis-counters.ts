import { Redis } from 'ioredis';
import type { CounterSlot, CounterStore, ReserveOutcome } from './counter-store.ts';

// KEYS: bucket keys; ARGV: limits (n), then expiry timestamps in ms (n).
// Checks every bucket, then increments all; Redis runs the script atomically, so concurrent
// requests from any number of API processes can never both take the last unit.
const RESERVE = `
local n = #KEYS
for i = 1, n do
  local count = tonumber(redis.call('GET', KEYS[i]) or '0')
  if count >= tonumber(ARGV[i]) then return {-i, count} end
end
local counts = {}
for i = 1, n do
  counts[i] = redis.call('INCR', KEYS[i])
  redis.call('PEXPIREAT', KEYS[i], ARGV[n + i])
end
return counts`;

const RELEASE = `
for i = 1, #KEYS do
  local count = tonumber(redis.call('GET', KEYS[i]) or '0')
  if count > 0 then redis.call('DECR', KEYS[i]) end
end
return 1`;

const PREFIX = 'dragnet:rl:';

type ScriptCall = (numberOfKeys: number, ...args: (string | number)[]) => Promise<number[]>;

export function createRedisCounters(deps: { url: string }): CounterStore {
  const redis = new Redis(deps.url, { maxRetriesPerRequest: 2 });
  // defineCommand sends each script once and then calls it by its SHA.
  redis.defineCommand('dragnetReserve', { lua: RESERVE });
  redis.defineCommand('dragnetRelease', { lua: RELEASE });
  const scripts = redis as unknown as { dragnetReserve: ScriptCall; dragnetRelease: ScriptCall };
  const keyed = (keys: string[]) => keys.map((k) => PREFIX + k);

  return {
    async reserve(slots: CounterSlot[]): Promise<ReserveOutcome> {
      // Expiry a minute past the window end so a late refund still finds its key.
      const result = await scripts.dragnetReserve(
        slots.length,
        ...keyed(slots.map((s) => s.key)),
        ...slots.map((s) => s.limit),
        ...slots.map((s) => s.expiresAt + 60_000),
      );
      if (result[0]! < 0) return { ok: false, index: -result[0]! - 1, count: result[1]! };
      return { ok: true, counts: result.map(Number) };
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
