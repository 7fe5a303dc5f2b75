import ipaddr from 'ipaddr.js';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { DAY_MS, type Clock } from '../../lib/clock.ts';
import { AppError } from '../../lib/errors.ts';

/** How long after its last successful login an address stays known to an account. */
const KNOWN_ADDRESS_MS = 90 * DAY_MS;

export interface LoginThrottleSettings {
  windowSeconds: number;
  /** Failures for one account, from one address or from all together, before its delays start. */
  maxFailuresPerAccount: number;
  maxFailuresPerAddress: number;
  /** Longest delay any limit imposes between attempts. */
  maxAddressDelaySeconds: number;
}

/** A password check in progress: counted as a failure until the caller forgets it. */
export interface ThrottledAttempt {
  ids: number[];
  /**
   * Seconds the account as a whole is slowed down for, or null: always null at an address the
   * account logged in from before, and for a signed-in user's confirmation. Only a right password
   * with a valid second factor may pass while it runs; the caller decides, as only it can check them.
   */
  accountRetryAfter: number | null;
}

/** A password check: a login, or the current password a signed-in user confirms. */
export type PasswordCheck = 'login' | 'confirmation';

/**
 * The address as the throttle counts it. A host is usually given a whole IPv6 /64 and can pick
 * any address in it, so an IPv6 address counts as its /64; an IPv4-mapped one as the IPv4 address.
 */
export function loginAddressKey(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const prefix = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...prefix, 0, 0, 0, 0]).toString()}/64`;
}

export const tooManyAttempts = (retryAfterSeconds: number) =>
  new AppError('too_many_attempts', 'too many failed password attempts; try again later', {
    retryAfterSeconds,
    extra: { retry_after_seconds: retryAfterSeconds },
  });

/**
 * Failed password checks (logins and the password a signed-in user confirms) are counted in the
 * store, not in memory, so every API process and a restart see the same count (docs/api.md
 * "Login throttling"). No limit locks anyone out: past each limit, attempts must keep a delay
 * after the last failure in its scope (1 s, doubling with every further failure, up to
 * maxAddressDelaySeconds), and an attempt that waited is judged like any other.
 *
 * - An account from one client address: the guesses of one attacker at one account. An attempt
 *   sooner than the delay is refused unheard.
 * - A client address, whatever the account: password spraying. Refused unheard too, but never
 *   more than the delay, since one address is often a whole office behind NAT.
 * - An account from every address together: a guesser spread over many addresses. This one only
 *   slows the account down and is never a refusal of its owner: it does not apply at an address
 *   the account logged in from within 90 days (its pair count still does), nor to a signed-in
 *   user's confirmation, and elsewhere the caller lets a right password with a valid second
 *   factor through (ThrottledAttempt.accountRetryAfter).
 *
 * Addresses are counted by loginAddressKey().
 */
export function createLoginThrottle(deps: { db: Kysely<Database>; clock: Clock; settings: LoginThrottleSettings }) {
  const { db, clock, settings } = deps;
  const windowMs = settings.windowSeconds * 1000;
  const secondsUntil = (at: number, now: number) => Math.max(1, Math.ceil((at - now) / 1000));
  const scopes = (rawEmail: string, address: string) => {
    const email = rawEmail.trim().toLowerCase();
    const key = loginAddressKey(address);
    // An address key has no space, so no email can make one pair's scope equal another's.
    return { email, key, account: `account:${email}`, address: `address:${key}`, pair: `pair:${key} ${email}` };
  };

  async function isKnownAddress(email: string, key: string, now: number): Promise<boolean> {
    const row = await db
      .selectFrom('known_login_addresses')
      .innerJoin('users', 'users.id', 'known_login_addresses.user_id')
      .select('known_login_addresses.user_id')
      .where('users.email', '=', email)
      .where('known_login_addresses.address_key', '=', key)
      .where('known_login_addresses.last_success_at', '>', now - KNOWN_ADDRESS_MS)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Seconds an attempt in `scope` must still wait, or null: `limit` failures pass freely. */
  async function delayOf(scope: string, limit: number, ownId: number, now: number): Promise<number | null> {
    const row = await db
      .selectFrom('auth_failures')
      .select((eb) => [eb.fn.countAll<number>().as('failures'), eb.fn.max('failed_at').as('newest')])
      .where('scope', '=', scope)
      .where('failed_at', '>', now - windowMs)
      .where('id', '<>', ownId)
      .executeTakeFirstOrThrow();
    const beyond = Number(row.failures) - limit;
    if (beyond < 0) return null;
    const until = Number(row.newest) + Math.min(settings.maxAddressDelaySeconds, 2 ** beyond) * 1000;
    return until > now ? secondsUntil(until, now) : null;
  }

  async function forget(attempt: { ids: number[] }): Promise<void> {
    if (attempt.ids.length) await db.deleteFrom('auth_failures').where('id', 'in', attempt.ids).execute();
  }

  /** Forgets an attempt that was not judged and answers 429 with when to come back. */
  async function refuse(attempt: { ids: number[] }, retryAfterSeconds: number): Promise<never> {
    await forget(attempt);
    throw tooManyAttempts(retryAfterSeconds);
  }

  return {
    /**
     * Counts this attempt as a failure before the password is checked, then looks at the
     * counts. Recording first is what makes the limits hold under concurrency: of N guesses
     * sent at once, each sees the others, so no more than the limit get a password check. The
     * caller forgets the attempt (`forget`) when it turns out not to be a failure.
     */
    async begin(email: string, address: string, check: PasswordCheck): Promise<ThrottledAttempt> {
      const now = clock.now().getTime();
      const scope = scopes(email, address);
      const rows = await db
        .insertInto('auth_failures')
        .values([scope.account, scope.address, scope.pair].map((name) => ({ scope: name, failed_at: now })))
        .returning(['id', 'scope'])
        .execute();
      const idOf = (name: string) => Number(rows.find((row) => row.scope === name)!.id);
      const attempt = { ids: rows.map((row) => Number(row.id)) };
      const retryAfter =
        (await delayOf(scope.pair, settings.maxFailuresPerAccount, idOf(scope.pair), now)) ??
        (await delayOf(scope.address, settings.maxFailuresPerAddress, idOf(scope.address), now));
      // A refused attempt is not a guess: it must not extend the delay.
      if (retryAfter !== null) return refuse(attempt, retryAfter);
      const accountDelay =
        check === 'login'
          ? await delayOf(scope.account, settings.maxFailuresPerAccount, idOf(scope.account), now)
          : null;
      const accountRetryAfter =
        accountDelay !== null && !(await isKnownAddress(scope.email, scope.key, now)) ? accountDelay : null;
      await db
        .deleteFrom('auth_failures')
        .where('failed_at', '<=', now - windowMs)
        .execute();
      return { ...attempt, accountRetryAfter };
    },

    forget,
    refuse,

    /**
     * After a successful login: the account's earlier failures from this address were its
     * owner's, and the address is known to the account from now on.
     */
    async loggedIn(user: { id: number; email: string }, address: string): Promise<void> {
      const now = clock.now().getTime();
      const scope = scopes(user.email, address);
      await db.deleteFrom('auth_failures').where('scope', '=', scope.pair).execute();
      await db
        .insertInto('known_login_addresses')
        .values({ user_id: user.id, address_key: scope.key, last_success_at: now })
        .onConflict((conflict) => conflict.columns(['user_id', 'address_key']).doUpdateSet({ last_success_at: now }))
        .execute();
      await db
        .deleteFrom('known_login_addresses')
        .where('user_id', '=', user.id)
        .where('last_success_at', '<=', now - KNOWN_ADDRESS_MS)
        .execute();
    },
  };
}

export type LoginThrottle = ReturnType<typeof createLoginThrottle>;
