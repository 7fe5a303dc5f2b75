import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import type { CounterSlot, CounterStore } from './counters/counter-store.ts';
import { chain, type MaybePromise } from '../../lib/maybe-promise.ts';
import type { ActiveLimit, LimitEntry, LimitResolver } from './limits.ts';
import { periodLabels, secondsUntil, windowAt, type Window } from './windows.ts';

export interface WindowState {
  limit: number;
  used: number;
  remaining: number;
  resetSeconds: number;
}

export interface Admission {
  keys: string[];
  /** The endpoint's own daily window, which X-RateLimit-* describe. */
  endpoint: WindowState | null;
  /** The account's monthly window (X-RateLimit-Account-*). */
  account: WindowState | null;
  released: boolean;
}

const keyOf = (orgId: number, entry: LimitEntry, start: number) => `${orgId}|${entry.scope}|${entry.period}|${start}`;

/** The counter slots of one organization's limits for one endpoint, in the current windows. */
interface SlotPlan {
  orgId: number;
  windows: readonly Readonly<Window>[];
  slots: CounterSlot[];
  keys: string[];
}

const isCurrent = (plan: SlotPlan, entries: readonly ActiveLimit[], ms: number) =>
  entries.every((entry, i) => windowAt(entry.period, ms) === plan.windows[i]);

/**
 * Two buckets on every authenticated request (spec 8.1): the account-wide cap and the
 * endpoint's own limit. A request is admitted only if every bucket has room, and then counts
 * against all of them; the caller gives the reservation back when the response is not a 2xx.
 */
export function createRateLimiter(deps: { counters: CounterStore; limits: LimitResolver; clock: Clock }) {
  const { counters, limits, clock } = deps;
  // Keyed by the entry list, which the limit resolver keeps per organization and endpoint.
  const plans = new WeakMap<readonly ActiveLimit[], SlotPlan>();

  const state = (limit: number, used: number, end: number, now: Date): WindowState => ({
    limit,
    used,
    remaining: Math.max(0, limit - used),
    resetSeconds: secondsUntil(end, now),
  });

  const indexOf = (entries: readonly ActiveLimit[], scope: 'account' | 'service', period: string) =>
    entries.findIndex((e) => (scope === 'account' ? e.scope === 'account' : e.scope !== 'account') && e.period === period);

  /** spec 8.1.5: a refused response of a limited endpoint still describes its windows. */
  async function refuse(slug: string, entries: readonly ActiveLimit[], windows: readonly Window[], keys: string[], full: number, now: Date): Promise<never> {
    const entry = entries[full]!;
    const window = windows[full]!;
    const retryAfterSeconds = secondsUntil(window.end, now);
    const what = entry.scope === 'account' ? 'account-wide limit' : `limit of ${slug}`;
    const used = await counters.read(keys);
    const headers: Record<string, number> = {};
    const describe = (prefix: string, scope: 'account' | 'service', period: string) => {
      const i = indexOf(entries, scope, period);
      if (i === -1) return;
      const described = state(entries[i]!.limit, used[i] ?? 0, windows[i]!.end, now);
      headers[`${prefix}-limit`] = described.limit;
      headers[`${prefix}-remaining`] = described.remaining;
      headers[`${prefix}-reset`] = described.resetSeconds;
    };
    describe('x-ratelimit', 'service', 'day');
    describe('x-ratelimit-account', 'account', 'month');
    throw new AppError('rate_limited', `rate limit exceeded: ${what} of ${entry.limit} per ${periodLabels[entry.period]}`, {
      headers,
      retryAfterSeconds,
      extra: {
        retry_after_seconds: retryAfterSeconds,
        limit: entry.limit,
        remaining: 0,
        reset_at: new Date(window.end).toISOString(),
      },
    });
  }

  return {
    /**
     * Reserves one unit of every limit the request counts against, or refuses it (429).
     * Synchronous when the limits are cached and the counters are in memory (the embedded
     * store): it runs on every authenticated request.
     */
    admit(orgId: number, slug: string): MaybePromise<Admission> {
      return chain(limits.forRequest(orgId, slug), (entries) => {
        const now = clock.now();
        const ms = now.getTime();
        // The same slots serve every request until a window turns (each second, for the
        // per-second cap): their keys are built and hashed once, not per request.
        let plan = plans.get(entries);
        if (!plan || plan.orgId !== orgId || !isCurrent(plan, entries, ms)) {
          const windows = entries.map((entry) => windowAt(entry.period, ms));
          const slots = entries.map((entry, i) => ({ key: keyOf(orgId, entry, windows[i]!.start), limit: entry.limit, expiresAt: windows[i]!.end }));
          plan = { orgId, windows, slots, keys: slots.map((slot) => slot.key) };
          plans.set(entries, plan);
        }
        const { windows, slots, keys } = plan;
        return chain(counters.reserve(slots), (outcome) => {
          if (!outcome.ok) return refuse(slug, entries, windows, keys, outcome.index, now);
          const endpoint = indexOf(entries, 'service', 'day');
          const account = indexOf(entries, 'account', 'month');
          return {
            keys,
            endpoint: endpoint === -1 ? null : state(entries[endpoint]!.limit, outcome.counts[endpoint]!, windows[endpoint]!.end, now),
            account: account === -1 ? null : state(entries[account]!.limit, outcome.counts[account]!, windows[account]!.end, now),
            released: false,
          };
        });
      });
    },

    async release(admission: Admission): Promise<void> {
      if (admission.released) return;
      admission.released = true;
      await counters.release(admission.keys);
    },

    /** Current use of each limit, for the usage report. */
    async usage(orgId: number, entries: LimitEntry[]) {
      const now = clock.now();
      const limited = entries.filter((e): e is ActiveLimit => e.limit !== null);
      const windows = limited.map((e) => windowAt(e.period, now.getTime()));
      const used = await counters.read(limited.map((e, i) => keyOf(orgId, e, windows[i]!.start)));
      return limited.map((entry, i) => {
        const s = state(entry.limit, Math.min(used[i]!, entry.limit), windows[i]!.end, now);
        return { period: periodLabels[entry.period], limit: s.limit, used: s.used, remaining: s.remaining, reset_seconds: s.resetSeconds };
      });
    },

    close: () => counters.close(),
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
