import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';

export interface LoginThrottleSettings {
  windowSeconds: number;
  maxFailuresPerAccount: number;
  maxFailuresPerAddress: number;
  /** Longest spacing an address over its limit must keep between attempts. */
  maxAddressDelaySeconds: number;
}

/**
 * Failed logins are counted in the store, not in memory, so every API process and a restart
 * see the same count (docs/api.md "Login throttling").
 *
 * - An account is blocked once its failures within the window reach the maximum, until the
 *   oldest counted failure ages out: the right password is refused too, as it may be a guess.
 * - A client address is never blocked, since one address is often a whole office behind NAT:
 *   past its maximum, each attempt from it must come a delay after the previous failure from
 *   it (1 s, doubling with every further failure, up to maxAddressDelaySeconds). An attempt
 *   that waited is judged like any other, so a colleague's right password logs in.
 */
export function createLoginThrottle(deps: { db: Kysely<Database>; clock: Clock; settings: LoginThrottleSettings }) {
  const { db, clock, settings } = deps;
  const windowMs = settings.windowSeconds * 1000;
  const accountScope = (email: string) => `account:${email.trim().toLowerCase()}`;
  const secondsUntil = (at: number, now: number) => Math.max(1, Math.ceil((at - now) / 1000));

  async function failuresOf(scope: string, now: number, except: number) {
    const row = await db
      .selectFrom('auth_failures')
      .select((eb) => [eb.fn.countAll<number>().as('failures'), eb.fn.min('failed_at').as('oldest'), eb.fn.max('failed_at').as('newest')])
      .where('scope', '=', scope)
      .where('failed_at', '>', now - windowMs)
      .where('id', '<>', except)
      .executeTakeFirstOrThrow();
    return { failures: Number(row.failures), oldest: Number(row.oldest), newest: Number(row.newest) };
  }

  /** Seconds the account stays blocked, or null. */
  async function accountBlock(scope: string, ownId: number, now: number): Promise<number | null> {
    const { failures, oldest } = await failuresOf(scope, now, ownId);
    // This attempt counts as well: the maximum-th failure is the last one judged.
    return failures + 1 > settings.maxFailuresPerAccount ? secondsUntil(oldest + windowMs, now) : null;
  }

  /** Seconds this address must still wait before an attempt of it is judged, or null. */
  async function addressWait(scope: string, ownId: number, now: number): Promise<number | null> {
    const { failures, newest } = await failuresOf(scope, now, ownId);
    const beyond = failures - settings.maxFailuresPerAddress;
    if (beyond < 0) return null;
    const delayMs = Math.min(settings.maxAddressDelaySeconds, 2 ** beyond) * 1000;
    return newest + delayMs > now ? secondsUntil(newest + delayMs, now) : null;
  }

  return {
    /**
     * Counts this attempt as a failure before the password is checked, then looks at the
     * counts. Recording first is what makes the limits hold under concurrency: of N guesses
     * sent at once, each sees the others, so no more than the limit get a password check. The
     * caller forgets the attempt (`forget`) when it turns out not to be a failure.
     */
    async begin(email: string, address: string): Promise<{ ids: number[] }> {
      const now = clock.now().getTime();
      const [account, client] = await db
        .insertInto('auth_failures')
        .values([
          { scope: accountScope(email), failed_at: now },
          { scope: `address:${address}`, failed_at: now },
        ])
        .returning(['id', 'scope'])
        .execute()
        .then((rows) => [rows.find((r) => r.scope.startsWith('account:'))!, rows.find((r) => r.scope.startsWith('address:'))!]);
      const attempt = { ids: [Number(account!.id), Number(client!.id)] };
      const retryAfterSeconds =
        (await addressWait(client!.scope, Number(client!.id), now)) ?? (await accountBlock(account!.scope, Number(account!.id), now));
      if (retryAfterSeconds !== null) {
        // A refused attempt is not a guess: it must not extend the block or the delay.
        await this.forget(attempt);
        throw new AppError('too_many_attempts', 'too many failed login attempts; try again later', {
          retryAfterSeconds,
          extra: { retry_after_seconds: retryAfterSeconds },
        });
      }
      await db.deleteFrom('auth_failures').where('failed_at', '<=', now - windowMs).execute();
      return attempt;
    },

    async forget(attempt: { ids: number[] }): Promise<void> {
      if (attempt.ids.length) await db.deleteFrom('auth_failures').where('id', 'in', attempt.ids).execute();
    },

    async clearAccount(email: string): Promise<void> {
      await db.deleteFrom('auth_failures').where('scope', '=', accountScope(email)).execute();
    },
  };
}

export type LoginThrottle = ReturnType<typeof createLoginThrottle>;
