import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { Selectable } from 'kysely';
import type { UserTable } from '../db/schema.ts';
import { AppError, validationError } from '../lib/errors.ts';
import { chain, settle, type MaybePromise } from '../lib/maybe-promise.ts';
import { addRouteHook } from './route-hooks.ts';

/** The user a request acts as: its row of `users`, as modules/orgs reads it. */
export type AuthenticatedUser = Selectable<UserTable>;

/**
 * What authentication asks of the modules (auth and orgs implement it): declared here, so that
 * the routes of every module can import this file without importing those modules.
 */
export interface AccessAuthenticator {
  /** The active user an access token belongs to; throws `unauthorized` for any other token. */
  authenticateAccess(accessToken: string): MaybePromise<AuthenticatedUser>;
}

export interface ActingOrgResolver {
  /** The organization a request acts for: the user's own, or one it manages (MSSP). */
  resolveActingOrg(user: AuthenticatedUser, requestedOrgId: number | undefined): MaybePromise<number>;
}

export interface AuthContext {
  user: AuthenticatedUser;
  /** The organization this request acts for: the user's own, or one it manages. */
  orgId: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null;
  }
  interface FastifyContextConfig {
    /** A route outside /service/ that still needs a bearer token. */
    requiresAuth?: boolean;
    /**
     * Also takes an API key as the password of HTTP Basic (TAXII and MISP feed clients that
     * speak only Basic): the API keys work of issue 26 reads it.
     */
    basicAuth?: boolean;
  }
}

export const SERVICE_PREFIX = '/service/';

export function requireAuth(request: Pick<FastifyRequest, 'auth'>): AuthContext {
  if (!request.auth) throw new AppError('unauthorized', 'authentication required');
  return request.auth;
}

function requestedOrgId(request: FastifyRequest): number | undefined {
  const fromQuery = (request.query as Record<string, unknown> | undefined)?.org_id;
  const raw = fromQuery ?? request.headers['x-org-id'];
  if (raw === undefined || raw === '') return undefined;
  // Decimal digits only, as every id in a path or query (http/validation.ts): Number() would
  // take " 1", "1e3" or "0x1" too.
  const value = typeof raw === 'string' && /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value) || value < 1)
    throw validationError('org_id', 'must be a positive integer in decimal digits');
  return value;
}

/**
 * Every /service/ route needs a bearer access token (spec 5). Authentication runs in onRequest,
 * before body parsing, validation and rate limiting, so an anonymous caller learns nothing else.
 */
export function registerAuthentication(
  app: FastifyInstance,
  deps: { auth: AccessAuthenticator; organizations: ActingOrgResolver },
) {
  app.decorateRequest('auth', null);
  // A callback hook: with the token and user cached, authentication finishes in the same tick.
  const authenticate: onRequestHookHandler = (request, _reply, done) => {
    settle(() => {
      const header = request.headers.authorization;
      // The scheme name is case-insensitive (RFC 7235 2.1).
      const match = header ? /^Bearer ([A-Za-z0-9._~+/=-]+)$/i.exec(header) : null;
      if (!match?.[1]) {
        throw new AppError(
          'unauthorized',
          header ? 'Authorization header must be "Bearer <access token>"' : 'missing bearer token',
        );
      }
      return chain(deps.auth.authenticateAccess(match[1]), (user) =>
        chain(deps.organizations.resolveActingOrg(user, requestedOrgId(request)), (orgId) => {
          request.auth = { user, orgId };
        }),
      );
    }, done);
  };
  // Only the routes that need a token run the hook (a route hook, before the rate limiter's).
  app.addHook('onRoute', (route) => {
    const service = route.url.startsWith(SERVICE_PREFIX);
    if (service && route.schema) {
      route.schema = { ...route.schema, security: [{ bearerAuth: [] }] } as typeof route.schema;
    }
    if (service || route.config?.requiresAuth) addRouteHook(route, 'onRequest', authenticate);
  });
}
