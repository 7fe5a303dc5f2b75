import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { Clock } from '../../lib/clock.ts';
import type { KeyRing } from '../../lib/crypto.ts';
import { AppError, validationError } from '../../lib/errors.ts';
import { chain, type MaybePromise } from '../../lib/maybe-promise.ts';
import { userTarget, type AuditLog } from '../audit/index.ts';
import type { UserRepository, UserRow } from '../orgs/index.ts';
import type { LoginThrottle } from './login-throttle.ts';
import { assertPasswordStrength, hashPassword, verifyPassword } from './password.ts';
import type { TokenService, VerifiedToken } from './token.service.ts';
import { canonicalBackupCode, enrollmentDetails, matchingTotpStep, newBackupCodes, newTotpSeed } from './two-factor.ts';

const invalidCredentials = () => new AppError('invalid_credentials', 'email or password is incorrect');

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

  /** Accepts a current TOTP code (once) or an unused backup code (once). */
  async function consumeSecondFactor(user: UserRow, otp: string): Promise<boolean> {
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
      return result.numUpdatedRows > 0n;
    }
    const result = await db
      .updateTable('backup_codes')
      .set({ used_at: clock.now().getTime() })
      .where('user_id', '=', user.id)
      .where('code_digest', '=', keys.digest(canonicalBackupCode(otp)))
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  return {
    async login(input: { email: string; password: string; otp?: string }, clientAddress: string) {
      // Every attempt counts as a failure until it succeeds (see LoginThrottle.begin).
      const attempt = await throttle.begin(input.email, clientAddress);
      const user = await users.findByEmail(input.email.trim().toLowerCase());
      const passwordOk = user
        ? await verifyPassword(user.password_hash, input.password)
        : (await verifyPassword(await decoyHash, input.password), false);
      if (!user || !passwordOk || user.is_active !== 1) {
        // An unknown email belongs to no organization: it has no log to go to.
        if (user) await auditAccess(user, clientAddress, 'login.failed', passwordOk ? 'account_disabled' : 'password');
        throw invalidCredentials();
      }
      if (user.totp_enabled === 1) {
        if (!input.otp) {
          await throttle.forget(attempt);
          throw new AppError('otp_required', 'this account has two-factor authentication: send otp', {
            fields: [{ field: 'otp', message: 'required for this account' }],
          });
        }
        if (!(await consumeSecondFactor(user, input.otp))) {
          await auditAccess(user, clientAddress, 'login.failed', 'otp');
          throw new AppError('invalid_otp', 'otp is not a current authenticator code or an unused backup code', {
            fields: [{ field: 'otp', message: 'invalid, expired or already used' }],
          });
        }
      }
      await throttle.forget(attempt);
      await throttle.clearAccount(input.email);
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

    async setupTwoFactor(user: UserRow) {
      if (user.totp_enabled === 1) {
        throw new AppError('conflict', 'two-factor authentication is already enabled for this account');
      }
      const seed = newTotpSeed();
      await users.update(user.id, { totp_pending_secret: keys.encryptSecret(seed) });
      return enrollmentDetails(seed, user.email);
    },

    async verifyTwoFactorEnrollment(user: UserRow, otp: string) {
      if (user.totp_enabled === 1) {
        throw new AppError('conflict', 'two-factor authentication is already enabled for this account');
      }
      if (!user.totp_pending_secret) {
        throw new AppError('conflict', 'no enrollment in progress: call setup_2fa first');
      }
      const step = matchingTotpStep(keys.decryptSecret(user.totp_pending_secret), otp, clock.now());
      if (step === null) throw validationError('otp', 'is not a current code for the seed from setup_2fa');
      const codes = newBackupCodes();
      await db.transaction().execute(async (tx) => {
        // Conditional on the pending seed still being there: of two confirmations racing,
        // one enables 2FA and hands out codes; the other gets 409 and its codes never exist.
        const enabled = await tx
          .updateTable('users')
          .set({ totp_enabled: 1, totp_secret: user.totp_pending_secret, totp_pending_secret: null, totp_last_step: step })
          .where('id', '=', user.id)
          .where('totp_enabled', '=', 0)
          .where('totp_pending_secret', '=', user.totp_pending_secret)
          .executeTakeFirst();
        if (enabled.numUpdatedRows === 0n) throw new AppError('conflict', 'two-factor authentication is already enabled for this account');
        await tx.deleteFrom('backup_codes').where('user_id', '=', user.id).execute();
        await tx
          .insertInto('backup_codes')
          .values(codes.map((code) => ({ user_id: user.id, code_digest: keys.digest(canonicalBackupCode(code)) })))
          .execute();
      });
      return { backup_codes: codes };
    },

    async changePassword(user: UserRow, input: { password: string; new_password: string; confirm_new_password: string }) {
      if (!(await verifyPassword(user.password_hash, input.password))) {
        throw validationError('password', 'is not the current password');
      }
      if (input.new_password !== input.confirm_new_password) {
        throw validationError('confirm_new_password', 'does not match new_password');
      }
      if (input.new_password === input.password) {
        throw validationError('new_password', 'must differ from the current password');
      }
      assertPasswordStrength(input.new_password, user.email, 'new_password');
      const tokenVersion = user.token_version + 1;
      await users.update(user.id, {
        password_hash: await hashPassword(input.new_password),
        password_changed_at: clock.now().getTime(),
        // Every token issued before this moment carries the old version and stops working.
        token_version: tokenVersion,
      });
      return { message: 'password changed; tokens issued before now are revoked', ...(await tokens.issuePair({ id: user.id, token_version: tokenVersion })) };
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
