import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { epochMs, type Clock } from '../../lib/clock.ts';
import { validationError } from '../../lib/errors.ts';
import { chain, type MaybePromise } from '../../lib/maybe-promise.ts';
import { periods, type Period } from './windows.ts';

/** Spec 8.1: the account-wide cap over all endpoints. */
export const ACCOUNT_DEFAULTS: Partial<Record<Period, number>> = { second: 25, month: 100_000 };

/** Spec 8.1 table; every other endpoint gets DEFAULT_SERVICE_DAILY_LIMIT (docs/api.md). */
export const SERVICE_DAILY_LIMITS: Record<string, number> = {
  'messenger-search-create': 100,
  'messenger-channels': 1000,
  'messenger-channels-categories': 1000,
  'messenger-search-history': 1000,
  domain_quick_search: 100,
  email_quick_search: 100,
  accounts_database_search: 10_000,
};

export const DEFAULT_SERVICE_DAILY_LIMIT = 10_000;

export const ACCOUNT_SCOPE = 'account';
export const serviceScope = (slug: string) => `service:${slug}`;

export interface LimitEntry {
  scope: string;
  period: Period;
  /** null: unlimited. */
  limit: number | null;
}

// Overrides change rarely (an operator's CLI command); a short cache keeps a store read off
// every request while letting a change take effect within seconds in every process.
const OVERRIDE_CACHE_MS = 5_000;

/** A limit that is in force (not unlimited). */
export type ActiveLimit = LimitEntry & { limit: number };

interface CachedOverrides {
  at: number;
  overrides: Map<string, number | null>;
  /** Per endpoint slug: the limits a request to it counts against. */
  perRequest: Map<string, ActiveLimit[]>;
}

export function createLimitResolver(deps: { db: Kysely<Database>; clock: Clock }) {
  const { db, clock } = deps;
  const cache = new Map<number, CachedOverrides>();

  /** Synchronous while the organization's overrides are cached (lib/maybe-promise.ts). */
  function cachedOverrides(orgId: number): MaybePromise<CachedOverrides> {
    const now = epochMs(clock);
    const cached = cache.get(orgId);
    if (cached && now - cached.at < OVERRIDE_CACHE_MS) return cached;
    return db
      .selectFrom('rate_limit_overrides')
      .selectAll()
      .where('org_id', '=', orgId)
      .execute()
      .then((rows) => {
        const fresh = {
          at: now,
          overrides: new Map(rows.map((r) => [`${r.scope}|${r.period}`, r.limit_value])),
          perRequest: new Map(),
        };
        cache.set(orgId, fresh);
        return fresh;
      });
  }

  const resolve = (overrides: Map<string, number | null>, scope: string, period: Period, fallback: number | null) => {
    const key = `${scope}|${period}`;
    return overrides.has(key) ? overrides.get(key)! : fallback;
  };

  const accountLimits = (overrides: Map<string, number | null>): LimitEntry[] =>
    (['second', 'month'] as Period[])
      .map((period) => ({
        scope: ACCOUNT_SCOPE,
        period,
        limit: resolve(overrides, ACCOUNT_SCOPE, period, ACCOUNT_DEFAULTS[period] ?? null),
      }))
      .filter((entry) => entry.limit !== null);

  const serviceLimits = (overrides: Map<string, number | null>, slug: string): LimitEntry[] => {
    const scope = serviceScope(slug);
    return periods
      .map((period) => ({
        scope,
        period,
        limit: resolve(
          overrides,
          scope,
          period,
          period === 'day' ? (SERVICE_DAILY_LIMITS[slug] ?? DEFAULT_SERVICE_DAILY_LIMIT) : null,
        ),
      }))
      .filter((entry) => entry.limit !== null);
  };

  return {
    /** The account-wide limits in force for an organization (unlimited ones omitted). */
    account: async (orgId: number): Promise<LimitEntry[]> => accountLimits((await cachedOverrides(orgId)).overrides),

    service: async (orgId: number, slug: string): Promise<LimitEntry[]> =>
      serviceLimits((await cachedOverrides(orgId)).overrides, slug),

    /**
     * Every limit a request to `slug` counts against: the account's first, so an exhausted
     * account cap is the reason reported on every endpoint. Kept with the cached overrides.
     */
    forRequest: (orgId: number, slug: string): MaybePromise<readonly ActiveLimit[]> =>
      chain(cachedOverrides(orgId), (cached) => {
        let entries = cached.perRequest.get(slug);
        if (!entries) {
          entries = [...accountLimits(cached.overrides), ...serviceLimits(cached.overrides, slug)] as ActiveLimit[];
          cached.perRequest.set(slug, entries);
        }
        return entries;
      }),

    /** Sets (number), removes (null: unlimited) or restores the default (undefined) of one limit. */
    async setOverride(orgId: number, scope: string, period: Period, limit: number | null | 'default'): Promise<void> {
      if (limit !== null && limit !== 'default' && (!Number.isInteger(limit) || limit < 0)) {
        throw validationError('limit', 'must be a whole number >= 0, "none" or "default"');
      }
      if (limit === 'default') {
        await db
          .deleteFrom('rate_limit_overrides')
          .where('org_id', '=', orgId)
          .where('scope', '=', scope)
          .where('period', '=', period)
          .execute();
      } else {
        await db
          .insertInto('rate_limit_overrides')
          .values({ org_id: orgId, scope, period, limit_value: limit })
          .onConflict((oc) => oc.columns(['org_id', 'scope', 'period']).doUpdateSet({ limit_value: limit }))
          .execute();
      }
      cache.delete(orgId);
    },

    async clearOverrides(orgId: number): Promise<void> {
      await db.deleteFrom('rate_limit_overrides').where('org_id', '=', orgId).execute();
      cache.delete(orgId);
    },

    listOverrides: (orgId: number) =>
      db
        .selectFrom('rate_limit_overrides')
        .select(['scope', 'period', 'limit_value'])
        .where('org_id', '=', orgId)
        .orderBy('scope')
        .execute(),
  };
}

export type LimitResolver = ReturnType<typeof createLimitResolver>;
