import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { Clock } from '../../lib/clock.ts';
import type { KeyRing } from '../../lib/crypto.ts';
import { AppError, validationError } from '../../lib/errors.ts';
import { chain, type MaybePromise } from '../../lib/maybe-promise.ts';
import { assertPasswordStrength, hashPassword, verifyPassword } from '../../lib/password.ts';
import { userTarget, type AuditDetails, type AuditEventName, type AuditLog } from '../audit/index.ts';
import type { UserRepository, UserRow } from '../orgs/index.ts';
import { tooManyAttempts, type LoginThrottle } from './login-throttle.ts';
import type { TokenService, VerifiedToken } from './token.service.ts';
import { canonicalBackupCode, enrollmentDetails, matchingTotpStep, newBackupCodes, newTotpSeed } from './two-factor.ts';

const invalidCredentials = () => new AppError('invalid_credentials', 'email or password is incorrect');

type SecondFactor = 'totp' | 'backup_code';

export function createAuthService(deps: {
  db: Kysely<Database>;
  users: UserRepository;
  tokens: TokenService;
  throttle: LoginThrottle;
  keys: KeyRing;
  clock: Clock;
  audit: AuditLog;
}) {
  const { db, users, tokens, throttle, keys, clock } = deps;

  /** A login or refresh outcome in the user's own organization's audit log. */
  const auditAccess = (user: UserRow, clientAddress: string, event: 'login.succeeded' | 'login.failed' | 'token.refresh_refused', reason?: string) =>
    deps.audit.record({
      orgId: user.org_id,
      // Whoever failed is not known to be the user; whoever succeeded is.
      actor: event === 'login.succeeded' ? { id: user.id, email: user.email } : null,
      via: 'api',
      ip: clientAddress,
      event,
      target: userTarget(user),
      details: reason ? { reason } : {},
    });
  /**
   * Something the signed-in user did to their own account, in their own organization's log: an
   * MSSP acting for another organization still changes its own password or 2FA.
   */
  const auditSelf = (user: UserRow, clientAddress: string, event: AuditEventName, details: AuditDetails = {}) =>
    deps.audit.record({ orgId: user.org_id, actor: { id: user.id, email: user.email }, via: 'api', ip: clientAddress, event, target: userTarget(user), details });
  // Unknown emails still pay for one argon2 verification, so response time does not tell
  // an attacker which addresses have accounts.
  const decoyHash = hashPassword('dragnet-decoy-password');

  /** The user behind a verified token, if it is still active and the token not revoked. */
  const currentUser = (verified: VerifiedToken): MaybePromise<UserRow> =>
    chain(users.findById(verified.userId), (user) => {
      if (!user || user.is_active !== 1) throw new AppError('unauthorized', 'account is disabled or no longer exists');
      if (user.token_version !== verified.tokenVersion) throw new AppError('unauthorized', 'token has been revoked');
      return user;
    });

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

  return {
    async login(input: { email: string; password: string; otp?: string }, clientAddress: string) {
      // Every attempt counts as a failure until it succeeds (see LoginThrottle.begin).
      const attempt = await throttle.begin(input.email, clientAddress, 'login');
      const slowed = attempt.accountRetryAfter;
      // While the account is slowed down (never at an address it logged in from before) only a
      // right password with a valid second factor gets in, so an attempt without otp is refused
      // before any check.
      if (slowed !== null && !input.otp) return throttle.refuse(attempt, slowed);
      const user = await users.findByEmail(input.email.trim().toLowerCase());
      const passwordOk = user
        ? await verifyPassword(user.password_hash, input.password)
        : (await verifyPassword(await decoyHash, input.password), false);
      if (slowed !== null && (!user || user.is_active !== 1 || user.totp_enabled !== 1)) {
        // No second factor can let this one through: not judged, and (after the same password
        // check as every other) the same answer, so it tells nothing about the password or 2FA.
        return throttle.refuse(attempt, slowed);
      }
      if (!user || !passwordOk || user.is_active !== 1) {
        // An unknown email belongs to no organization: it has no log to go to.
        if (user) await auditAccess(user, clientAddress, 'login.failed', passwordOk ? 'account_disabled' : 'password');
        throw slowed !== null ? tooManyAttempts(slowed) : invalidCredentials();
      }
      if (user.totp_enabled === 1) {
        if (!input.otp) {
          await throttle.forget(attempt);
          throw new AppError('otp_required', 'this account has two-factor authentication: send otp', {
            fields: [{ field: 'otp', message: 'required for this account' }],
          });
        }
        const used = await consumeSecondFactor(user, input.otp);
        if (used === null) {
          await auditAccess(user, clientAddress, 'login.failed', 'otp');
          throw slowed !== null
            ? tooManyAttempts(slowed)
            : new AppError('invalid_otp', 'otp is not a current authenticator code or an unused backup code', {
                fields: [{ field: 'otp', message: 'invalid, expired or already used' }],
              });
        }
        if (used === 'backup_code') await auditSelf(user, clientAddress, 'two_factor.backup_code_used', { during: 'login' });
      }
      await throttle.forget(attempt);
      await throttle.loggedIn(user, clientAddress);
      await users.update(user.id, { last_login_at: clock.now().getTime() });
      await auditAccess(user, clientAddress, 'login.succeeded');
      return tokens.issuePair(user);
    },

    async refresh(refreshToken: string, clientAddress: string) {
      const verified = await tokens.verify(refreshToken, 'refresh');
      try {
        return { access: await tokens.issueAccess(await currentUser(verified)) };
      } catch (error) {
        // A genuine refresh token of a disabled user, or one issued before a password change.
        const user = await users.findById(verified.userId);
        if (user) await auditAccess(user, clientAddress, 'token.refresh_refused', user.is_active !== 1 ? 'account_disabled' : 'revoked');
        throw error;
      }
    },

    /** Runs on every authenticated request: synchronous while token and user are cached. */
    authenticateAccess(accessToken: string): MaybePromise<UserRow> {
      return chain(tokens.verify(accessToken, 'access'), currentUser);
    },

    async setupTwoFactor(user: UserRow, input: { password: string }, clientAddress: string) {
      assertTwoFactor(user, false);
      await confirmIdentity(user, input, clientAddress, (reason) =>
        auditSelf(user, clientAddress, 'two_factor.verification_failed', { during: 'setup', reason }),
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
        await auditSelf(user, clientAddress, 'two_factor.verification_failed', { during: 'enrollment', reason: 'otp' });
        throw validationError('otp', 'is not a current code for the seed from setup_2fa');
      }
      const tokenVersion = user.token_version + 1;
      const codes = await db.transaction().execute(async (tx) => {
        // Conditional on the pending seed still being there: of two confirmations racing,
        // one enables 2FA and hands out codes; the other gets 409 and its codes never exist.
        const enabled = await tx
          .updateTable('users')
          .set({ totp_enabled: 1, totp_secret: user.totp_pending_secret, totp_pending_secret: null, totp_last_step: step, token_version: tokenVersion })
          .where('id', '=', user.id)
          .where('totp_enabled', '=', 0)
          .where('totp_pending_secret', '=', user.totp_pending_secret)
          .executeTakeFirst();
        if (enabled.numUpdatedRows === 0n) throw new AppError('conflict', 'two-factor authentication is already enabled for this account');
        return replaceBackupCodes(tx, user.id);
      });
      await auditSelf(user, clientAddress, 'two_factor.enabled');
      return { backup_codes: codes, ...(await tokens.issuePair({ id: user.id, token_version: tokenVersion })) };
    },

    async disableTwoFactor(user: UserRow, input: { password: string; otp: string }, clientAddress: string) {
      assertTwoFactor(user, true);
      const used = await confirmIdentity(user, input, clientAddress, (reason) =>
        auditSelf(user, clientAddress, 'two_factor.verification_failed', { during: 'disable', reason }),
      );
      if (used === 'backup_code') await auditSelf(user, clientAddress, 'two_factor.backup_code_used', { during: 'disable' });
      await users.clearTwoFactor(user.id);
      await auditSelf(user, clientAddress, 'two_factor.disabled');
      return { message: 'two-factor authentication is off; backup codes no longer work' };
    },

    async newBackupCodes(user: UserRow, input: { password: string; otp: string }, clientAddress: string) {
      assertTwoFactor(user, true);
      const used = await confirmIdentity(user, input, clientAddress, (reason) =>
        auditSelf(user, clientAddress, 'two_factor.verification_failed', { during: 'backup_codes', reason }),
      );
      if (used === 'backup_code') await auditSelf(user, clientAddress, 'two_factor.backup_code_used', { during: 'backup_codes' });
      const codes = await db.transaction().execute((tx) => replaceBackupCodes(tx, user.id));
      await auditSelf(user, clientAddress, 'two_factor.backup_codes_regenerated');
      return { backup_codes: codes };
    },

    async changePassword(user: UserRow, input: { password: string; new_password: string; confirm_new_password: string }, clientAddress: string) {
      const failed = (reason: string) => auditSelf(user, clientAddress, 'password.change_failed', { reason });
      await confirmIdentity(user, input, clientAddress, failed);
      const refuse = async (field: string, message: string) => {
        await failed(field);
        throw validationError(field, message);
      };
      if (input.new_password !== input.confirm_new_password) await refuse('confirm_new_password', 'does not match new_password');
      if (input.new_password === input.password) await refuse('new_password', 'must differ from the current password');
      try {
        assertPasswordStrength(input.new_password, user.email, 'new_password');
      } catch (error) {
        await failed('new_password');
        throw error;
      }
      const tokenVersion = user.token_version + 1;
      await users.update(user.id, {
        password_hash: await hashPassword(input.new_password),
        password_changed_at: clock.now().getTime(),
        // Every token issued before this moment carries the old version and stops working.
        token_version: tokenVersion,
      });
      await auditSelf(user, clientAddress, 'password.changed');
      return { message: 'password changed; tokens issued before now are revoked', ...(await tokens.issuePair({ id: user.id, token_version: tokenVersion })) };
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
