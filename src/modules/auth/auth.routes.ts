import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireAuth } from '../../http/auth.plugin.ts';
import { withErrors } from '../../http/schemas.ts';
import type { AuthService } from './auth.service.ts';
import {
  AccessOnly,
  BackupCodesResponse,
  ConfirmedByTwoFactorBody,
  DisableTwoFactorResponse,
  EnrollmentResponse,
  LoginBody,
  NewPasswordBody,
  NewPasswordResponse,
  RefreshBody,
  SetupTwoFactorBody,
  SetupTwoFactorResponse,
  TokenPair,
  VerifyTwoFactorBody,
} from './auth.schemas.ts';

export function authRoutes(auth: AuthService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/token/',
      {
        schema: {
          operationId: 'login',
          tags: ['auth'],
          summary: 'Log in: exchange email, password (and otp with 2FA) for a token pair',
          body: LoginBody,
          response: withErrors({ 200: TokenPair }, [400, 401, 429]),
        },
      },
      (request) => auth.login(request.body, request.ip),
    );

    app.post(
      '/token/refresh/',
      {
        schema: {
          operationId: 'refreshToken',
          tags: ['auth'],
          summary: 'Exchange a refresh token for a new access token',
          body: RefreshBody,
          response: withErrors({ 200: AccessOnly }, [400, 401]),
        },
      },
      (request) => auth.refresh(request.body.refresh, request.ip),
    );

    app.post(
      '/service/setup_2fa/',
      {
        // The account's own credentials: a person's session only, never an API key.
        config: { requiresSession: true },
        schema: {
          operationId: 'setup2fa',
          tags: ['auth'],
          summary: 'Start 2FA enrollment with the current password: returns a new TOTP seed and its QR code',
          body: SetupTwoFactorBody,
          response: withErrors({ 200: SetupTwoFactorResponse }, [400, 401, 409, 429]),
        },
      },
      (request) => auth.setupTwoFactor(requireAuth(request).user, request.body, request.ip),
    );

    app.post(
      '/service/verify_2fa_enrollment/',
      {
        config: { requiresSession: true },
        schema: {
          operationId: 'verify2faEnrollment',
          tags: ['auth'],
          summary:
            'Finish 2FA enrollment with a current code; returns ten backup codes and new tokens (earlier ones are revoked)',
          body: VerifyTwoFactorBody,
          response: withErrors({ 200: EnrollmentResponse }, [400, 401, 409]),
        },
      },
      (request) => auth.verifyTwoFactorEnrollment(requireAuth(request).user, request.body.otp, request.ip),
    );

    app.post(
      '/service/disable_2fa/',
      {
        config: { requiresSession: true },
        schema: {
          operationId: 'disable2fa',
          tags: ['auth'],
          summary: 'Turn 2FA off with the current password and a current code or a backup code (beyond the spec)',
          body: ConfirmedByTwoFactorBody,
          response: withErrors({ 200: DisableTwoFactorResponse }, [400, 401, 409, 429]),
        },
      },
      (request) => auth.disableTwoFactor(requireAuth(request).user, request.body, request.ip),
    );

    app.post(
      '/service/new_backup_codes/',
      {
        config: { requiresSession: true },
        schema: {
          operationId: 'newBackupCodes',
          tags: ['auth'],
          summary:
            'Replace the backup codes, with the current password and a current code or a backup code (beyond the spec)',
          body: ConfirmedByTwoFactorBody,
          response: withErrors({ 200: BackupCodesResponse }, [400, 401, 409, 429]),
        },
      },
      (request) => auth.newBackupCodes(requireAuth(request).user, request.body, request.ip),
    );

    app.post(
      '/service/new_password/',
      {
        config: { requiresSession: true },
        schema: {
          operationId: 'changePassword',
          tags: ['auth'],
          summary: 'Change the password; revokes every token issued before',
          body: NewPasswordBody,
          response: withErrors({ 200: NewPasswordResponse }, [400, 401, 429]),
        },
      },
      (request) => auth.changePassword(requireAuth(request).user, request.body, request.ip),
    );
  };
}
