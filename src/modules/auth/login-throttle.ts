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

  return {
    async assertAllowed(email: string, address: string): Promise<void> {
      const now = clock.now().getTime();
      for (const { scope, max } of scopes(email, address)) {
        const row = await db
          .selectFrom('auth_failures')
          .select((eb) => [eb.fn.countAll<number>().as('failures'), eb.fn.min('failed_at').as('oldest')])
          .where('scope', '=', scope)
          .where('failed_at', '>', now - windowMs)
          .executeTakeFirstOrThrow();
        if (Number(row.failures) >= max) {
          const retryAfterSeconds = Math.max(1, Math.ceil((Number(row.oldest) + windowMs - now) / 1000));
          throw new AppError('too_many_attempts', 'too many failed login attempts; try again later', {
            retryAfterSeconds,
            extra: { retry_after_seconds: retryAfterSeconds },
          });
        }
      }
    },

    async recordFailure(email: string, address: string): Promise<void> {
      const now = clock.now().getTime();
      await db.transaction().execute(async (tx) => {
        await tx.deleteFrom('auth_failures').where('failed_at', '<=', now - windowMs).execute();
        await tx
          .insertInto('auth_failures')
          .values(scopes(email, address).map(({ scope }) => ({ scope, failed_at: now })))
          .execute();
      });
    },

    async clearAccount(email: string): Promise<void> {
      await db.deleteFrom('auth_failures').where('scope', '=', `account:${email.trim().toLowerCase()}`).execute();
    },
  };
}

export type LoginThrottle = ReturnType<typeof createLoginThrottle>;
