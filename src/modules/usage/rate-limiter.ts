import type { Clock } from '../../lib/clock.ts';
import type { RateLimitAdmission } from '../../http/rate-limit.plugin.ts';
import { rateLimitHeaders, type WindowState } from '../../http/rate-limit-headers.ts';
import { AppError } from '../../lib/errors.ts';
import type { CounterSlot, CounterStore } from './counters/counter-store.ts';
import { chain, type MaybePromise } from '../../lib/maybe-promise.ts';
import type { ActiveLimit, LimitEntry, LimitResolver } from './limits.ts';
import { periodLabels, secondsUntil, windowAt, type Window } from './windows.ts';

export interface Admission extends RateLimitAdmission {
  slots: CounterSlot[];
}

const keyOf = (orgId: number, entry: LimitEntry, start: number) => `${orgId}|${entry.scope}|${entry.period}|${start}`;

/** The counter slots of one organization's limits for one endpoint, in the current windows. */
interface SlotPlan {
  orgId: number;
  windows: readonly Readonly<Window>[];
  slots: CounterSlot[];
  keys: string[];
  /** Which slots the headers describe (-1: that limit is not in force). */
  endpointDay: number;
  accountMonth: number;
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
    entries.findIndex(
      (e) => (scope === 'account' ? e.scope === 'account' : e.scope !== 'account') && e.period === period,
    );

  /** The window of slot `i` with `used` units taken, or null when no such limit is in force. */
  const stateOf = (entries: readonly ActiveLimit[], plan: SlotPlan, i: number, used: number, now: Date) =>
    i === -1 ? null : state(entries[i]!.limit, used, plan.windows[i]!.end, now);

  /** spec 8.1.5: a refused response of a limited endpoint still describes its windows. */
  async function refuse(
    slug: string,
    entries: readonly ActiveLimit[],
    plan: SlotPlan,
    full: number,
    now: Date,
  ): Promise<never> {
    const entry = entries[full]!;
    const window = plan.windows[full]!;
    const retryAfterSeconds = secondsUntil(window.end, now);
    const what = entry.scope === 'account' ? 'account-wide limit' : `limit of ${slug}`;
    const used = await counters.read(plan.keys);
    throw new AppError(
      'rate_limited',
      `rate limit exceeded: ${what} of ${entry.limit} per ${periodLabels[entry.period]}`,
      {
        headers: rateLimitHeaders(
          stateOf(entries, plan, plan.endpointDay, used[plan.endpointDay] ?? 0, now),
          stateOf(entries, plan, plan.accountMonth, used[plan.accountMonth] ?? 0, now),
        ),
        retryAfterSeconds,
        extra: {
          retry_after_seconds: retryAfterSeconds,
          limit: entry.limit,
          remaining: 0,
          reset_at: new Date(window.end).toISOString(),
        },
      },
    );
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
          const slots = entries.map((entry, i) => ({
            key: keyOf(orgId, entry, windows[i]!.start),
            limit: entry.limit,
            expiresAt: windows[i]!.end,
          }));
          plan = {
            orgId,
            windows,
            slots,
            keys: slots.map((slot) => slot.key),
            endpointDay: indexOf(entries, 'service', 'day'),
            accountMonth: indexOf(entries, 'account', 'month'),
          };
          plans.set(entries, plan);
        }
        const current = plan;
        return chain(counters.reserve(current.slots), (outcome) => {
          if (!outcome.ok) return refuse(slug, entries, current, outcome.index, now);
          return {
            slots: current.slots,
            endpoint: stateOf(entries, current, current.endpointDay, outcome.counts[current.endpointDay]!, now),
            account: stateOf(entries, current, current.accountMonth, outcome.counts[current.accountMonth]!, now),
            released: false,
          };
        });
      });
    },

    async release(admission: Admission): Promise<void> {
      if (admission.released) return;
      admission.released = true;
      await counters.release(admission.slots);
    },

    /** Current use of each limit, for the usage report. */
    async usage(orgId: number, entries: LimitEntry[]) {
      const now = clock.now();
      const limited = entries.filter((e): e is ActiveLimit => e.limit !== null);
      const windows = limited.map((e) => windowAt(e.period, now.getTime()));
      const used = await counters.read(limited.map((e, i) => keyOf(orgId, e, windows[i]!.start)));
      return limited.map((entry, i) => {
        const s = state(entry.limit, Math.min(used[i]!, entry.limit), windows[i]!.end, now);
        return {
          period: periodLabels[entry.period],
          limit: s.limit,
          used: s.used,
          remaining: s.remaining,
          reset_seconds: s.resetSeconds,
        };
      });
    },

    close: () => counters.close(),
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
