import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';
import type { CounterStore } from './counters/counter-store.ts';
import type { LimitEntry, LimitResolver } from './limits.ts';
import { periodLabels, secondsUntil, windowOf } from './windows.ts';

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

/**
 * Two buckets on every authenticated request (spec 8.1): the account-wide cap and the
 * endpoint's own limit. A request is admitted only if every bucket has room, and then counts
 * against all of them; the caller gives the reservation back when the response is not a 2xx.
 */
export function createRateLimiter(deps: { counters: CounterStore; limits: LimitResolver; clock: Clock }) {
  const { counters, limits, clock } = deps;

  async function entriesFor(orgId: number, slug: string) {
    // Account first, so an exhausted account cap is the reason reported on every endpoint.
    return [...(await limits.account(orgId)), ...(await limits.service(orgId, slug))] as (LimitEntry & { limit: number })[];
  }

  const state = (limit: number, used: number, end: number, now: Date): WindowState => ({
    limit,
    used,
    remaining: Math.max(0, limit - used),
    resetSeconds: secondsUntil(end, now),
  });

  return {
    async admit(orgId: number, slug: string): Promise<Admission> {
      const now = clock.now();
      const entries = await entriesFor(orgId, slug);
      const windows = entries.map((entry) => windowOf(entry.period, now));
      const slots = entries.map((entry, i) => ({ key: keyOf(orgId, entry, windows[i]!.start), limit: entry.limit, expiresAt: windows[i]!.end }));
      const outcome = await counters.reserve(slots);
      if (!outcome.ok) {
        const entry = entries[outcome.index]!;
        const window = windows[outcome.index]!;
        const retryAfterSeconds = secondsUntil(window.end, now);
        const what = entry.scope === 'account' ? 'account-wide limit' : `limit of ${slug}`;
        // spec 8.1.5: a refused response of a limited endpoint still describes its windows.
        const used = await counters.read(slots.map((slot) => slot.key));
        const headers: Record<string, number> = {};
        const describe = (prefix: string, scope: 'account' | 'service', period: string) => {
          const i = entries.findIndex((e) => (scope === 'account' ? e.scope === 'account' : e.scope !== 'account') && e.period === period);
          if (i === -1) return;
          const window = state(entries[i]!.limit, used[i] ?? 0, windows[i]!.end, now);
          headers[`${prefix}-limit`] = window.limit;
          headers[`${prefix}-remaining`] = window.remaining;
          headers[`${prefix}-reset`] = window.resetSeconds;
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
      const find = (scope: 'account' | 'service', period: string) => {
        const i = entries.findIndex((e) => (scope === 'account' ? e.scope === 'account' : e.scope !== 'account') && e.period === period);
        return i === -1 ? null : state(entries[i]!.limit, outcome.counts[i]!, windows[i]!.end, now);
      };
      return { keys: slots.map((s) => s.key), endpoint: find('service', 'day'), account: find('account', 'month'), released: false };
    },

    async release(admission: Admission): Promise<void> {
      if (admission.released) return;
      admission.released = true;
      await counters.release(admission.keys);
    },

    /** Current use of each limit, for the usage report. */
    async usage(orgId: number, entries: LimitEntry[]) {
      const now = clock.now();
      const limited = entries.filter((e): e is LimitEntry & { limit: number } => e.limit !== null);
      const windows = limited.map((e) => windowOf(e.period, now));
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
