import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { Clock } from '../../lib/clock.ts';
import type { KeyRing } from '../../lib/crypto.ts';
import { validationError } from '../../lib/errors.ts';
import type { UserRow } from '../orgs/index.ts';
import type { LoginThrottle } from './login-throttle.ts';
import { verifyPassword } from '../../lib/password.ts';
import { canonicalBackupCode, matchingTotpStep } from './two-factor.ts';

type SecondFactor = 'totp' | 'backup_code';

/** Checks of what a user knows beyond a token: a second factor, and the password of a signed-in user. */
export function createCredentialCheck(deps: {
  db: Kysely<Database>;
  keys: KeyRing;
  clock: Clock;
  throttle: LoginThrottle;
}) {
  const { db, keys, clock, throttle } = deps;

  /** Accepts a current TOTP code (once) or an unused backup code (once): which one, or null. */
  async function consumeSecondFactor(user: UserRow, otp: string): Promise<SecondFactor | null> {
    const seed = user.totp_secret ? keys.decryptSecret(user.totp_secret) : null;
    const step = seed ? matchingTotpStep(seed, otp, clock.now()) : null;
    if (step !== null) {
      // Conditional update: of two logins racing with one code, exactly one advances the step.
      const result = await db
        .updateTable('users')
        .set({ totp_last_step: step })
        .where('id', '=', user.id)
        .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
        .executeTakeFirst();
      return result.numUpdatedRows > 0n ? 'totp' : null;
    }
    const result = await db
      .updateTable('backup_codes')
      .set({ used_at: clock.now().getTime() })
      .where('user_id', '=', user.id)
      .where('code_digest', '=', keys.digest(canonicalBackupCode(otp)))
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n ? 'backup_code' : null;
  }

  /**
   * A password a signed-in user confirms, counted like a login and held by the delays of its
   * account and address pair and of its address: a stolen session must not be a faster way to
   * guess the password than /token/. The account-wide delay, which others' guesses cause, does
   * not hold it: the owner must be able to change a password under attack. With `otp`, a TOTP
   * code or backup code is checked (and spent) too. Failures are recorded as `failure` and
   * answered 400 naming the field.
   */
  async function confirmIdentity(
    user: UserRow,
    input: { password: string; otp?: string },
    clientAddress: string,
    failure: (reason: 'password' | 'otp') => Promise<void>,
  ): Promise<SecondFactor | null> {
    const attempt = await throttle.begin(user.email, clientAddress, 'confirmation');
    if (!(await verifyPassword(user.password_hash, input.password))) {
      await failure('password');
      throw validationError('password', 'is not the current password');
    }
    const used = input.otp === undefined ? null : await consumeSecondFactor(user, input.otp);
    if (input.otp !== undefined && used === null) {
      await failure('otp');
      throw validationError('otp', 'is not a current authenticator code or an unused backup code');
    }
    await throttle.forget(attempt);
    return used;
  }

  return { consumeSecondFactor, confirmIdentity };
}

export type CredentialCheck = ReturnType<typeof createCredentialCheck>;
