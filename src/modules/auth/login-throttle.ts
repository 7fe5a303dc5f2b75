import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';

export interface LoginThrottleSettings {
  windowSeconds: number;
  maxFailuresPerAccount: number;
  maxFailuresPerAddress: number;
}

/**
 * Failed logins are counted in the store, not in memory, so every API process and a restart
 * see the same count. An account and a client address are each blocked once their failures
 * within the window reach the maximum, until the oldest counted failure ages out.
 */
export function createLoginThrottle(deps: { db: Kysely<Database>; clock: Clock; settings: LoginThrottleSettings }) {
  const { db, clock, settings } = deps;
  const windowMs = settings.windowSeconds * 1000;
  const scopes = (email: string, address: string) => [
    { scope: `account:${email.trim().toLowerCase()}`, max: settings.maxFailuresPerAccount },
    { scope: `address:${address}`, max: settings.maxFailuresPerAddress },
  ];

  async function blockedFor(scope: string, max: number, now: number): Promise<number | null> {
    const row = await db
      .selectFrom('auth_failures')
      .select((eb) => [eb.fn.countAll<number>().as('failures'), eb.fn.min('failed_at').as('oldest')])
      .where('scope', '=', scope)
      .where('failed_at', '>', now - windowMs)
      .executeTakeFirstOrThrow();
    return Number(row.failures) > max ? Math.max(1, Math.ceil((Number(row.oldest) + windowMs - now) / 1000)) : null;
  }

  return {
    /**
     * Counts this attempt as a failure before the password is checked, then looks at the count.
     * Recording first is what makes the limit hold under concurrency: of N guesses sent at
     * once, the i-th recorded sees at least i failures, so at most `max` get a password check.
     * The caller forgets the attempt (`forget`) when it turns out not to be a failure.
     */
    async begin(email: string, address: string): Promise<{ ids: number[] }> {
      const now = clock.now().getTime();
      const inserted = await db
        .insertInto('auth_failures')
        .values(scopes(email, address).map(({ scope }) => ({ scope, failed_at: now })))
        .returning('id')
        .execute();
      const attempt = { ids: inserted.map((r) => Number(r.id)) };
      for (const { scope, max } of scopes(email, address)) {
        const retryAfterSeconds = await blockedFor(scope, max, now);
        if (retryAfterSeconds !== null) {
          // A refused attempt is not a guess: it must not extend the block.
          await this.forget(attempt);
          throw new AppError('too_many_attempts', 'too many failed login attempts; try again later', {
            retryAfterSeconds,
            extra: { retry_after_seconds: retryAfterSeconds },
          });
        }
      }
      await db.deleteFrom('auth_failures').where('failed_at', '<=', now - windowMs).execute();
      return attempt;
    },

    async forget(attempt: { ids: number[] }): Promise<void> {
      if (attempt.ids.length) await db.deleteFrom('auth_failures').where('id', 'in', attempt.ids).execute();
    },

    async clearAccount(email: string): Promise<void> {
      await db.deleteFrom('auth_failures').where('scope', '=', `account:${email.trim().toLowerCase()}`).execute();
    },
  };
}

export type LoginThrottle = ReturnType<typeof createLoginThrottle>;
