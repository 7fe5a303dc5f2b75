import { Redis } from 'ioredis';
import type { Clock } from '../../../lib/clock.ts';
import type { CounterSlot, CounterStore, ReserveOutcome } from './counter-store.ts';

// KEYS: bucket keys; ARGV: limits (n), then lifetimes in ms (n).
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
  redis.call('PEXPIRE', KEYS[i], ARGV[n + i])
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

// Lifetimes are relative (PEXPIRE), computed from Dragnet's clock: an absolute expiry taken from
// our clock would be in the past for Redis whenever the two clocks disagree, and Redis would
// drop the count at once.
export function createRedisCounters(deps: { url: string; clock: Clock }): CounterStore {
  const redis = new Redis(deps.url, { maxRetriesPerRequest: 2 });
  // defineCommand sends each script once and then calls it by its SHA.
  redis.defineCommand('dragnetReserve', { lua: RESERVE });
  redis.defineCommand('dragnetRelease', { lua: RELEASE });
  const scripts = redis as unknown as { dragnetReserve: ScriptCall; dragnetRelease: ScriptCall };
  const keyed = (keys: string[]) => keys.map((k) => PREFIX + k);

  return {
    async reserve(slots: CounterSlot[]): Promise<ReserveOutcome> {
      // Alive until a minute past the window end, so a late refund still finds its key.
      const now = deps.clock.now().getTime();
      const result = await scripts.dragnetReserve(
        slots.length,
        ...keyed(slots.map((s) => s.key)),
        ...slots.map((s) => s.limit),
        ...slots.map((s) => Math.max(1, s.expiresAt - now) + 60_000),
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
