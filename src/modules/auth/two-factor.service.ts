import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { Clock } from '../../lib/clock.ts';
import type { KeyRing } from '../../lib/crypto.ts';
import { AppError, validationError } from '../../lib/errors.ts';
import type { UserRepository, UserRow } from '../orgs/index.ts';
import type { AccountAudit } from './account-audit.ts';
import type { CredentialCheck } from './credential-check.ts';
import type { TokenService } from './token.service.ts';
import { canonicalBackupCode, enrollmentDetails, matchingTotpStep, newBackupCodes, newTotpSeed } from './two-factor.ts';

/** A signed-in user's own two-factor authentication: enrollment, backup codes, switching it off. */
export function createTwoFactorService(deps: {
  db: Kysely<Database>;
  users: UserRepository;
  tokens: TokenService;
  credentials: CredentialCheck;
  keys: KeyRing;
  clock: Clock;
  accountAudit: AccountAudit;
}) {
  const { db, users, tokens, credentials, keys, clock, accountAudit } = deps;

  const assertTwoFactor = (user: UserRow, on: boolean) => {
    if ((user.totp_enabled === 1) !== on) {
      throw new AppError('conflict', `two-factor authentication is ${on ? 'not' : 'already'} enabled for this account`);
    }
  };

  /** Ten new backup codes for the user, replacing every earlier one, inside `tx`. */
  async function replaceBackupCodes(tx: Transaction<Database>, userId: number): Promise<string[]> {
    const codes = newBackupCodes();
    await tx.deleteFrom('backup_codes').where('user_id', '=', userId).execute();
    await tx
      .insertInto('backup_codes')
      .values(codes.map((code) => ({ user_id: userId, code_digest: keys.digest(canonicalBackupCode(code)) })))
      .execute();
    return codes;
  }

  /** Password and a second factor for a change to 2FA itself, each failure audited under `during`. */
  async function confirmWithSecondFactor(
    user: UserRow,
    input: { password: string; otp: string },
    clientAddress: string,
    during: string,
  ) {
    const used = await credentials.confirmIdentity(user, input, clientAddress, (reason) =>
      accountAudit.self(user, clientAddress, 'two_factor.verification_failed', { during, reason }),
    );
    if (used === 'backup_code') await accountAudit.self(user, clientAddress, 'two_factor.backup_code_used', { during });
  }

  return {
    async setupTwoFactor(user: UserRow, input: { password: string }, clientAddress: string) {
      assertTwoFactor(user, false);
      await credentials.confirmIdentity(user, input, clientAddress, (reason) =>
        accountAudit.self(user, clientAddress, 'two_factor.verification_failed', { during: 'setup', reason }),
      );
      const seed = newTotpSeed();
      await users.update(user.id, { totp_pending_secret: keys.encryptSecret(seed) });
      return enrollmentDetails(seed, user.email);
    },

    /** Enables 2FA and revokes every other session: one opened before may be an intruder's. */
    async verifyTwoFactorEnrollment(user: UserRow, otp: string, clientAddress: string) {
      assertTwoFactor(user, false);
      if (!user.totp_pending_secret) {
        throw new AppError('conflict', 'no enrollment in progress: call setup_2fa first');
      }
      const step = matchingTotpStep(keys.decryptSecret(user.totp_pending_secret), otp, clock.now());
      if (step === null) {
        await accountAudit.self(user, clientAddress, 'two_factor.verification_failed', {
          during: 'enrollment',
          reason: 'otp',
        });
        throw validationError('otp', 'is not a current code for the seed from setup_2fa');
      }
      const tokenVersion = user.token_version + 1;
      const codes = await db.transaction().execute(async (tx) => {
        // Conditional on the pending seed still being there: of two confirmations racing,
        // one enables 2FA and hands out codes; the other gets 409 and its codes never exist.
        const enabled = await tx
          .updateTable('users')
          .set({
            totp_enabled: 1,
            totp_secret: user.totp_pending_secret,
            totp_pending_secret: null,
            totp_last_step: step,
            token_version: tokenVersion,
          })
          .where('id', '=', user.id)
          .where('totp_enabled', '=', 0)
          .where('totp_pending_secret', '=', user.totp_pending_secret)
          .executeTakeFirst();
        if (enabled.numUpdatedRows === 0n)
          throw new AppError('conflict', 'two-factor authentication is already enabled for this account');
        return replaceBackupCodes(tx, user.id);
      });
      await accountAudit.self(user, clientAddress, 'two_factor.enabled');
      return { backup_codes: codes, ...(await tokens.issuePair({ id: user.id, token_version: tokenVersion })) };
    },

    async disableTwoFactor(user: UserRow, input: { password: string; otp: string }, clientAddress: string) {
      assertTwoFactor(user, true);
      await confirmWithSecondFactor(user, input, clientAddress, 'disable');
      await users.clearTwoFactor(user.id);
      await accountAudit.self(user, clientAddress, 'two_factor.disabled');
      return { message: 'two-factor authentication is off; backup codes no longer work' };
    },

    async newBackupCodes(user: UserRow, input: { password: string; otp: string }, clientAddress: string) {
      assertTwoFactor(user, true);
      await confirmWithSecondFactor(user, input, clientAddress, 'backup_codes');
      const codes = await db.transaction().execute((tx) => replaceBackupCodes(tx, user.id));
      await accountAudit.self(user, clientAddress, 'two_factor.backup_codes_regenerated');
      return { backup_codes: codes };
    },
  };
}
