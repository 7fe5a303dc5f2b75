import { Redis } from 'ioredis';
import type { Clock } from '../../../lib/clock.ts';
import { AppError } from '../../../lib/errors.ts';
import type { CounterSlot, CounterStore, ReserveOutcome } from './counter-store.ts';
import type { Log } from '../../../lib/log.ts';

// Reservations of many requests in one call. KEYS: every reservation's bucket keys, one
// reservation after the other; ARGV: per reservation its number of buckets n, the extra units it
// would like to lease, its n limits, then its n lifetimes in ms. Each reservation checks every
// bucket, then increments all of them (or none: {-i, count} names the first full one). Redis
// runs the script atomically and the reservations in order, so concurrent requests from any
// number of API processes can never both take the last unit.
//
// A lease is granted only while every bucket keeps LEASE_HEADROOM times the lease free after it,
// so near a limit (and always under a 25-a-second cap) every request is counted here one by one.
// The answer is the n counts followed by the units leased.
const RESERVE_MANY = `
local headroom = tonumber(ARGV[1])
local results = {}
local k = 0
local a = 2
while a <= #ARGV do
  local n = tonumber(ARGV[a])
  local lease = tonumber(ARGV[a + 1])
  local refused = nil
  local before = {}
  for i = 1, n do
    local value = redis.call('GET', KEYS[k + i])
    local count = tonumber(value or '0')
    local limit = tonumber(ARGV[a + 1 + i])
    if count >= limit then
      refused = {-i, count}
      break
    end
    before[i] = value
    lease = math.min(lease, math.floor((limit - count - 1) / headroom))
  end
  if refused then
    results[#results + 1] = refused
  else
    if lease < 0 then lease = 0 end
    local counts = {}
    for i = 1, n do
      counts[i] = redis.call('INCRBY', KEYS[k + i], 1 + lease)
      if not before[i] then redis.call('PEXPIRE', KEYS[k + i], ARGV[a + 1 + n + i]) end
    end
    counts[n + 1] = lease
    results[#results + 1] = counts
  end
  k = k + n
  a = a + 2 * n + 2
end
return results`;

// Gives back ARGV[i] units of KEYS[i] (refunds, unused leases), never below zero and never
// recreating a key that has expired.
const GIVE_BACK = `
for i = 1, #KEYS do
  local count = tonumber(redis.call('GET', KEYS[i]) or '0')
  local units = math.min(count, tonumber(ARGV[i]))
  if units > 0 then redis.call('DECRBY', KEYS[i], units) end
end
return 1`;

const PREFIX = 'dragnet:rl:';
/** Reservations sent in one script call at most; more wait for the next. */
const MAX_BATCH = 256;
/** The most units one process holds for one set of buckets. */
const MAX_LEASE = 64;
/** A lease leaves this many times its size free in every bucket: room for as many processes. */
const LEASE_HEADROOM = 64;
/** Unused leased units go back to Redis after one to two of these periods. */
const LEASE_PERIOD_MS = 250;

type ScriptCall<T> = (numberOfKeys: number, ...args: (string | number)[]) => Promise<T>;

interface Pending {
  lease: Lease;
  ask: number;
  resolve(outcome: ReserveOutcome): void;
  reject(error: unknown): void;
}

/**
 * Units of one set of buckets (one limit plan, one window) that Redis has counted for this
 * process and that no request has taken yet.
 */
interface Lease {
  slots: CounterSlot[];
  units: number;
  /** Redis's counts after this process's last reservation for these buckets (units included). */
  counts: number[];
  /** Reservations asked for in this period and the one before: the demand a lease covers. */
  demand: number;
  previousDemand: number;
  /** The period in which the units still held were leased. */
  leasedIn: number;
  /** Reservations sent to Redis and not answered yet: their lease must not be dropped. */
  inFlight: number;
}

/** Adds the units `lease` holds to each of its keys' totals in `into`. */
const tally = (into: Map<string, number>, lease: Lease) => {
  for (const slot of lease.slots) into.set(slot.key, (into.get(slot.key) ?? 0) + lease.units);
};
const collect = (into: Map<string, number>, lease: Lease) => {
  tally(into, lease);
  lease.units = 0;
};
/** A request admitted under `lease`: the counts it sees leave out the units still held. */
const admitted = (lease: Lease): ReserveOutcome => ({
  ok: true,
  counts: lease.counts.map((count) => count - lease.units),
});

/** The connection with the scripts defined, and a reporter that logs each outage once. */
function connect(deps: { url: string; log: Log }) {
  const redis = new Redis(deps.url, { maxRetriesPerRequest: 2 });
  // Without a listener ioredis prints every failed reconnection as an unhandled error event;
  // one line per outage is enough (/readyz reports Redis down while it lasts).
  let outageReported = false;
  const reportError = (error: unknown) => {
    if (outageReported) return;
    outageReported = true;
    deps.log('rate-limit counters: Redis', error);
  };
  redis.on('error', reportError);
  redis.on('ready', () => (outageReported = false));
  // defineCommand sends each script once and then calls it by its SHA.
  redis.defineCommand('dragnetReserveMany', { lua: RESERVE_MANY });
  redis.defineCommand('dragnetGiveBack', { lua: GIVE_BACK });
  const scripts = redis as unknown as {
    dragnetReserveMany: ScriptCall<number[][]>;
    dragnetGiveBack: ScriptCall<number>;
  };
  return { redis, scripts, reportError };
}

/**
 * Counts in Redis, shared by every API process.
 *
 * A Redis command per request cost more than the rest of a cached request (CPU in ioredis and
 * in Redis, one round trip each), so two things keep Redis off most requests:
 * - batching: the reservations asked for in one turn of the event loop (the requests read from
 *   the sockets together) go in one script call, sent when the turn ends (setImmediate);
 * - leasing: a process under load reserves up to MAX_LEASE units beyond the request's own when
 *   every bucket has plenty of room left, and admits the next requests of that plan from them
 *   without a round trip. Every admitted request is still a unit counted in Redis, so no number
 *   of processes can exceed a limit. What leasing costs: units held by one process are used by
 *   others for at most two lease periods, and a request can then be refused early (only within
 *   LEASE_HEADROOM leases of a limit), the usage report of another process counts them as used
 *   for that long, and a process killed while holding them leaves them counted (at most
 *   MAX_LEASE per plan, docs/api.md "Rate limits").
 *
 * Lifetimes are relative (PEXPIRE), computed from Dragnet's clock: an absolute expiry taken from
 * our clock would be in the past for Redis whenever the two clocks disagree, and Redis would
 * drop the count at once.
 */
export function createRedisCounters(deps: { url: string; clock: Clock; log: Log }): CounterStore {
  const { redis, scripts, reportError } = connect(deps);

  // Keyed by the plan's slot array, which the rate limiter keeps for as long as its windows last.
  const leases = new Map<CounterSlot[], Lease>();
  let period = 0;

  const giveBack = (units: Map<string, number>) => {
    if (units.size === 0) return Promise.resolve();
    return scripts
      .dragnetGiveBack(units.size, ...[...units.keys()].map((key) => PREFIX + key), ...units.values())
      .then(() => undefined);
  };

  const sweep = () => {
    period++;
    const unused = new Map<string, number>();
    for (const [slots, lease] of leases) {
      if (lease.units > 0 && lease.leasedIn < period - 1) collect(unused, lease);
      if (lease.units === 0 && lease.inFlight === 0 && lease.demand === 0 && lease.previousDemand === 0)
        leases.delete(slots);
      lease.previousDemand = lease.demand;
      lease.demand = 0;
    }
    giveBack(unused).catch(reportError);
  };
  const sweeper = setInterval(sweep, LEASE_PERIOD_MS);
  sweeper.unref();

  const queue: Pending[] = [];
  const send = () => {
    const batch = queue.splice(0, MAX_BATCH);
    if (queue.length) setImmediate(send);
    const keys: string[] = [];
    const args: number[] = [LEASE_HEADROOM];
    // Alive until a minute past the window end, so a late refund still finds its key.
    const now = deps.clock.now().getTime();
    for (const { lease, ask } of batch) {
      const { slots } = lease;
      args.push(slots.length, ask);
      for (const slot of slots) {
        keys.push(PREFIX + slot.key);
        args.push(slot.limit);
      }
      for (const slot of slots) args.push(Math.max(1, slot.expiresAt - now) + 60_000);
    }
    scripts.dragnetReserveMany(keys.length, ...keys, ...args).then(
      (results) => batch.forEach((pending, i) => pending.resolve(settleReservation(pending, results[i]!))),
      (error: unknown) => {
        for (const pending of batch) pending.lease.inFlight--;
        // Without its counts no request can be admitted: the client may retry, the outage is
        // logged once (reportError) and /readyz reports it.
        const unavailable = new AppError('service_unavailable', 'rate-limit counters are unavailable; retry shortly', {
          retryAfterSeconds: 1,
          cause: error,
        });
        batch.forEach((pending) => pending.reject(unavailable));
      },
    );
  };

  const settleReservation = ({ lease }: Pending, result: number[]): ReserveOutcome => {
    lease.inFlight--;
    if (result[0]! < 0) return { ok: false, index: -result[0]! - 1, count: result[1]! };
    const buckets = lease.slots.length;
    const leased = result[buckets]!;
    if (leased > 0) {
      lease.units += leased;
      lease.leasedIn = period;
    }
    lease.counts = result.slice(0, buckets);
    return admitted(lease);
  };

  return {
    reserve(slots: CounterSlot[]) {
      let lease = leases.get(slots);
      if (!lease) {
        lease = { slots, units: 0, counts: [], demand: 0, previousDemand: 0, leasedIn: period, inFlight: 0 };
        leases.set(slots, lease);
      }
      lease.demand++;
      if (lease.units > 0) {
        lease.units--;
        return admitted(lease);
      }
      // A plan asked for once a period gets no lease: it would only be given back unused.
      const ask = Math.min(MAX_LEASE, Math.max(lease.demand, lease.previousDemand) - 1);
      lease.inFlight++;
      return new Promise<ReserveOutcome>((resolve, reject) => {
        if (queue.length === 0) setImmediate(send);
        queue.push({ lease, ask, resolve, reject });
      });
    },

    async release(slots: CounterSlot[]): Promise<void> {
      const lease = leases.get(slots);
      if (lease && lease.units > 0) {
        // The plan is leasing: the unit joins the lease, and goes back to Redis with it.
        lease.units++;
        lease.leasedIn = period;
        return;
      }
      // A refund lost in a Redis outage leaves one unit counted: the response stays as it was.
      await giveBack(new Map(slots.map((slot) => [slot.key, 1]))).catch(reportError);
    },

    async read(keys: string[]): Promise<number[]> {
      if (keys.length === 0) return [];
      const values = await redis.mget(...keys.map((key) => PREFIX + key));
      // This process's leased units are not used yet.
      const held = new Map<string, number>();
      for (const lease of leases.values()) tally(held, lease);
      return values.map((value, i) => Math.max(0, Number(value ?? 0) - (held.get(keys[i]!) ?? 0)));
    },

    async close(): Promise<void> {
      clearInterval(sweeper);
      const unused = new Map<string, number>();
      for (const lease of leases.values()) collect(unused, lease);
      leases.clear();
      await giveBack(unused).catch(reportError);
      await redis.quit();
    },
  };
}
