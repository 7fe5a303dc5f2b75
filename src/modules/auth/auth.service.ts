import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { Clock } from '../../lib/clock.ts';
import type { KeyRing } from '../../lib/crypto.ts';
import { AppError, validationError } from '../../lib/errors.ts';
import { chain, type MaybePromise } from '../../lib/maybe-promise.ts';
import { assertPasswordStrength, hashPassword, verifyPassword } from '../../lib/password.ts';
import type { AuditLog } from '../audit/index.ts';
import type { UserRepository, UserRow } from '../orgs/index.ts';
import { createAccountAudit } from './account-audit.ts';
import { createCredentialCheck } from './credential-check.ts';
import { tooManyAttempts, type LoginThrottle } from './login-throttle.ts';
import type { TokenService, VerifiedToken } from './token.service.ts';
import { createTwoFactorService } from './two-factor.service.ts';

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

  const accountAudit = createAccountAudit(deps.audit);
  const credentials = createCredentialCheck({ db, keys, clock, throttle });
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

  return {
    ...createTwoFactorService({ db, users, tokens, credentials, keys, clock, accountAudit }),

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
        if (user)
          await accountAudit.access(user, clientAddress, 'login.failed', passwordOk ? 'account_disabled' : 'password');
        throw slowed !== null ? tooManyAttempts(slowed) : invalidCredentials();
      }
      if (user.totp_enabled === 1) {
        if (!input.otp) {
          await throttle.forget(attempt);
          throw new AppError('otp_required', 'this account has two-factor authentication: send otp', {
            fields: [{ field: 'otp', message: 'required for this account' }],
          });
        }
        const used = await credentials.consumeSecondFactor(user, input.otp);
        if (used === null) {
          await accountAudit.access(user, clientAddress, 'login.failed', 'otp');
          throw slowed !== null
            ? tooManyAttempts(slowed)
            : new AppError(
                'invalid_otp',
                'the code is invalid, expired or already used: enter a current code from the authenticator app or an unused backup code',
                {
                  fields: [{ field: 'otp', message: 'invalid, expired or already used' }],
                },
              );
        }
        if (used === 'backup_code')
          await accountAudit.self(user, clientAddress, 'two_factor.backup_code_used', { during: 'login' });
      }
      await throttle.forget(attempt);
      await throttle.loggedIn(user, clientAddress);
      await users.update(user.id, { last_login_at: clock.now().getTime() });
      await accountAudit.access(user, clientAddress, 'login.succeeded');
      return tokens.issuePair(user);
    },

    async refresh(refreshToken: string, clientAddress: string) {
      const verified = await tokens.verify(refreshToken, 'refresh');
      try {
        return { access: await tokens.issueAccess(await currentUser(verified)) };
      } catch (error) {
        // A genuine refresh token of a disabled user, or one issued before a password change.
        const user = await users.findById(verified.userId);
        if (user)
          await accountAudit.access(
            user,
            clientAddress,
            'token.refresh_refused',
            user.is_active !== 1 ? 'account_disabled' : 'revoked',
          );
        throw error;
      }
    },

    /** Runs on every authenticated request: synchronous while token and user are cached. */
    authenticateAccess(accessToken: string): MaybePromise<UserRow> {
      return chain(tokens.verify(accessToken, 'access'), currentUser);
    },

    async changePassword(
      user: UserRow,
      input: { password: string; new_password: string; confirm_new_password: string },
      clientAddress: string,
    ) {
      const failed = (reason: string) => accountAudit.self(user, clientAddress, 'password.change_failed', { reason });
      await credentials.confirmIdentity(user, input, clientAddress, failed);
      const refuse = async (field: string, message: string) => {
        await failed(field);
        throw validationError(field, message);
      };
      if (input.new_password !== input.confirm_new_password)
        await refuse('confirm_new_password', 'does not match new_password');
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
      await accountAudit.self(user, clientAddress, 'password.changed');
      return {
        message: 'password changed; tokens issued before now are revoked',
        ...(await tokens.issuePair({ id: user.id, token_version: tokenVersion })),
      };
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;
