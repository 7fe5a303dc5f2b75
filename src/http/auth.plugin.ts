import type { FastifyInstance, FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify';
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

/** What a request authenticated by an API key knows of it (docs/api.md "API keys"). */
export interface ApiKeyIdentity {
  id: number;
  name: string;
  scope: ApiKeyScope;
}

export type ApiKeyScope = 'read' | 'read_write';

/** Every API key starts with this, which no access token (a JWT, `eyJ…`) does. */
export const API_KEY_PREFIX = 'dgk_';

export interface ApiKeyAuthenticator {
  /**
   * The key's creator, acting for the key's organization; throws `unauthorized` for an unknown,
   * expired or revoked key, or one whose creator is disabled or no longer in that organization.
   */
  authenticateApiKey(
    key: string,
    clientAddress: string,
  ): MaybePromise<{ user: AuthenticatedUser; orgId: number; apiKey: ApiKeyIdentity }>;
}

export interface ActingOrgResolver {
  /** The organization a request acts for: the user's own, or one it manages (MSSP). */
  resolveActingOrg(user: AuthenticatedUser, requestedOrgId: number | undefined): MaybePromise<number>;
}

export interface AuthContext {
  user: AuthenticatedUser;
  /** The organization this request acts for: the user's own, or one it manages. */
  orgId: number;
  /** Set when an API key authenticated the request (absent for a person's access token). */
  apiKey?: ApiKeyIdentity;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null;
  }
  interface FastifyContextConfig {
    /** A route outside /service/ that still needs a bearer token. */
    requiresAuth?: boolean;
    /** Also takes an API key as the password of HTTP Basic (TAXII and MISP feed clients that speak only Basic). */
    basicAuth?: boolean;
    /**
     * A POST (or other non-GET) route that changes nothing (a search, a preview): an API key
     * of scope `read` may call it. GET and HEAD routes need no mark.
     */
    readOnly?: boolean;
    /** Only a person's session (an access token) may call it: an API key gets 403 session_required. */
    requiresSession?: boolean;
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

type Credential = { kind: 'token'; token: string } | { kind: 'key'; key: string };

const BEARER = /^Bearer ([A-Za-z0-9._~+/=-]+)$/i;
const BASIC = /^Basic ([A-Za-z0-9+/]+={0,2})$/i;

/** The credential of a request: a bearer token or key, or (where `basic`) an API key as Basic password. */
function credentialOf(header: string | undefined, basic: boolean): Credential {
  // The scheme name is case-insensitive (RFC 7235 2.1).
  const bearer = header ? BEARER.exec(header)?.[1] : undefined;
  if (bearer)
    return bearer.startsWith(API_KEY_PREFIX) ? { kind: 'key', key: bearer } : { kind: 'token', token: bearer };
  const encoded = basic && header ? BASIC.exec(header)?.[1] : undefined;
  if (encoded !== undefined) {
    // RFC 7617: user-id ":" password; the user part is ignored, the password must be an API key.
    const decoded = Buffer.from(encoded, 'base64').toString('utf8');
    const password = decoded.slice(decoded.indexOf(':') + 1);
    if (decoded.includes(':') && password.startsWith(API_KEY_PREFIX)) return { kind: 'key', key: password };
    throw new AppError('unauthorized', 'HTTP Basic takes an API key as the password (never an account password)');
  }
  if (!header) throw new AppError('unauthorized', basic ? 'missing credentials' : 'missing bearer token');
  throw new AppError(
    'unauthorized',
    basic
      ? 'Authorization header must be "Bearer <access token or API key>" or HTTP Basic with an API key as password'
      : 'Authorization header must be "Bearer <access token or API key>"',
  );
}

/** What a route lets an API key do, read once when the route is declared. */
interface RouteAccess {
  basic: boolean;
  /** A key of scope `read` may call it. */
  readable: boolean;
  sessionOnly: boolean;
}

const routeAccess = (route: RouteOptions): RouteAccess => {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  return {
    basic: route.config?.basicAuth === true,
    readable: route.config?.readOnly === true || methods.every((method) => method === 'GET' || method === 'HEAD'),
    sessionOnly: route.config?.requiresSession === true,
  };
};

/** Whether an API key may make this request: its route, its scope, the organization asked for. */
function checkKeyAccess(access: RouteAccess, apiKey: ApiKeyIdentity, orgId: number, requested: number | undefined) {
  if (access.sessionOnly)
    throw new AppError('session_required', "an API key cannot do this: sign in with a password (a person's session)");
  if (!access.readable && apiKey.scope !== 'read_write') {
    throw new AppError('insufficient_scope', 'this request changes data: it needs an API key of scope read_write', {
      extra: { required_scope: 'read_write' },
      // RFC 6750 3.1
      headers: { 'www-authenticate': 'Bearer realm="dragnet", error="insufficient_scope", scope="read_write"' },
    });
  }
  if (requested !== undefined && requested !== orgId) {
    throw new AppError('forbidden', 'an API key acts only for the organization it was created in', {
      fields: [{ field: 'org_id', message: "not the API key's organization" }],
    });
  }
}

/** A 401 of a route that takes HTTP Basic invites Basic clients too (RFC 7235 4.1). */
const withBasicChallenge = (error: Error): Error =>
  error instanceof AppError && error.code === 'unauthorized'
    ? new AppError('unauthorized', error.message, {
        headers: { 'www-authenticate': 'Basic realm="dragnet", Bearer realm="dragnet"' },
      })
    : error;

/**
 * Every /service/ route needs a bearer access token or API key (spec 5, docs/api.md "API
 * keys"). Authentication runs in onRequest, before body parsing, validation and rate limiting,
 * so an anonymous caller learns nothing else.
 */
export function registerAuthentication(
  app: FastifyInstance,
  deps: { auth: AccessAuthenticator; organizations: ActingOrgResolver; apiKeys: ApiKeyAuthenticator },
) {
  app.decorateRequest('auth', null);
  // A callback hook: with the token (or key) and user cached, authentication finishes in the same tick.
  const authenticate =
    (access: RouteAccess): onRequestHookHandler =>
    (request, _reply, done) => {
      settle(
        () => {
          const credential = credentialOf(request.headers.authorization, access.basic);
          if (credential.kind === 'key') {
            return chain(deps.apiKeys.authenticateApiKey(credential.key, request.ip), ({ user, orgId, apiKey }) => {
              checkKeyAccess(access, apiKey, orgId, requestedOrgId(request));
              request.auth = { user, orgId, apiKey };
            });
          }
          return chain(deps.auth.authenticateAccess(credential.token), (user) =>
            chain(deps.organizations.resolveActingOrg(user, requestedOrgId(request)), (orgId) => {
              request.auth = { user, orgId };
            }),
          );
        },
        access.basic ? (error) => done(error && withBasicChallenge(error)) : done,
      );
    };
  // Only the routes that need a token run the hook (a route hook, before the rate limiter's).
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith(SERVICE_PREFIX) && !route.config?.requiresAuth) return;
    const access = routeAccess(route);
    if (route.schema) {
      const security: Record<string, string[]>[] = access.basic
        ? [{ bearerAuth: [] }, { apiKeyBasic: [] }]
        : [{ bearerAuth: [] }];
      route.schema = { ...route.schema, security } as typeof route.schema;
    }
    addRouteHook(route, 'onRequest', authenticate(access));
  });
}
