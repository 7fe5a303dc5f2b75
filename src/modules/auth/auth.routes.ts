import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireAuth } from '../../http/auth.plugin.ts';
import { withErrors } from '../../http/schemas.ts';
import { requestOrigin, userTarget, type AuditLog } from '../audit/index.ts';
import type { AuthService } from './auth.service.ts';
import {
  AccessOnly,
  BackupCodesResponse,
  LoginBody,
  NewPasswordBody,
  NewPasswordResponse,
  RefreshBody,
  SetupTwoFactorResponse,
  TokenPair,
  VerifyTwoFactorBody,
} from './auth.schemas.ts';

export function authRoutes(auth: AuthService, audit: AuditLog): FastifyPluginAsyncTypebox {
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
        schema: {
          operationId: 'setup2fa',
          tags: ['auth'],
          summary: 'Start 2FA enrollment: returns a new TOTP seed and its QR code',
          response: withErrors({ 200: SetupTwoFactorResponse }, [401, 409]),
        },
      },
      (request) => auth.setupTwoFactor(requireAuth(request).user),
    );

    app.post(
      '/service/verify_2fa_enrollment/',
      {
        schema: {
          operationId: 'verify2faEnrollment',
          tags: ['auth'],
          summary: 'Finish 2FA enrollment with a current code; returns ten backup codes',
          body: VerifyTwoFactorBody,
          response: withErrors({ 200: BackupCodesResponse }, [400, 401, 409]),
        },
      },
      async (request) => {
        const { user } = requireAuth(request);
        const codes = await auth.verifyTwoFactorEnrollment(user, request.body.otp);
        // In the user's own log: an MSSP acting for another organization still enrols itself.
        await audit.record({ ...requestOrigin(request), orgId: user.org_id, event: 'two_factor.enabled', target: userTarget(user) });
        return codes;
      },
    );

    app.post(
      '/service/new_password/',
      {
        schema: {
          operationId: 'changePassword',
          tags: ['auth'],
          summary: 'Change the password; revokes every token issued before',
          body: NewPasswordBody,
          response: withErrors({ 200: NewPasswordResponse }, [400, 401]),
        },
      },
      async (request) => {
        const { user } = requireAuth(request);
        const changed = await auth.changePassword(user, request.body);
        await audit.record({ ...requestOrigin(request), orgId: user.org_id, event: 'password.changed', target: userTarget(user) });
        return changed;
      },
    );
  };
}
