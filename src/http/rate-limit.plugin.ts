import type { FastifyInstance, onRequestHookHandler, onSendHookHandler, RouteOptions } from 'fastify';
import { chain, settle, type MaybePromise } from '../lib/maybe-promise.ts';
import { SERVICE_PREFIX } from './auth.plugin.ts';
import { onClientGone } from './client-gone.ts';
import { addRouteHook } from './route-hooks.ts';
import { rateLimitHeaders, type WindowState } from './rate-limit-headers.ts';

/** One admitted request's reservation, as far as the hooks read it. */
export interface RateLimitAdmission {
  /** The endpoint's own daily window, which X-RateLimit-* describe. */
  endpoint: WindowState | null;
  /** The account's monthly window (X-RateLimit-Account-*). */
  account: WindowState | null;
  released: boolean;
}

/**
 * What the hooks ask of the rate limiter and of the list of usage services (modules/usage
 * implements both): declared here, so that http/ does not import that module.
 */
export interface RequestLimiter {
  /** Reserves a unit of every limit the request counts against, or throws `rate_limited`. */
  admit(orgId: number, service: string): MaybePromise<RateLimitAdmission>;
  /** Gives back a reservation `admit` returned. */
  release(admission: RateLimitAdmission): Promise<void>;
}

export interface UsageServiceRegistry {
  register(route: RouteOptions): void;
  /** The usage service a route's URL counts against. */
  slugOf(url: string): string;
}

declare module 'fastify' {
  interface FastifyRequest {
    rateLimit: RateLimitAdmission | null;
  }
  interface FastifyContextConfig {
    /**
     * The usage service a route counts against (several routes may share one): a /service/
     * route's defaults to its first path segment; a route elsewhere is limited only with one.
     */
    rateLimit?: { service: string; name?: string };
  }
}

const isSuccess = (status: number) => status >= 200 && status < 300;

/** Every /service/ route counts against a usage service; a route elsewhere only if it names one. */
function isLimited(route: RouteOptions): boolean {
  if (route.url.startsWith(SERVICE_PREFIX)) return true;
  if (!route.config?.rateLimit) return false;
  // Counts are kept per organization: a route nobody authenticates on would never be counted.
  if (!route.config.requiresAuth) throw new Error(`${route.url} declares config.rateLimit without requiresAuth`);
  return true;
}

/**
 * Rate limiting of every /service/ route, and of every other authenticated route that names its
 * usage service in `config.rateLimit` (the TAXII server, the MISP feed): spec 8.1, docs/api.md
 * "Rate limits". It runs in onRequest right after authentication, so a refused request never
 * reaches validation or its handler; the reservation is given back when the response is not a
 * 2xx, or when the client leaves before it has the whole response.
 */
export function registerRateLimiting(
  app: FastifyInstance,
  deps: { limiter: RequestLimiter; catalog: UsageServiceRegistry; enabled: boolean },
) {
  const { limiter, catalog } = deps;
  app.decorateRequest('rateLimit', null);

  // Not async: most responses are 2xx and need nothing here, and an async hook would cost every
  // request a promise.
  const refundFailure: onSendHookHandler = (request, reply, payload, done) => {
    const admission = request.rateLimit;
    if (!admission || admission.released || isSuccess(reply.statusCode)) return done(null, payload);
    // spec 7: failed calls are refunded and do not count against limits.
    limiter.release(admission).then(() => {
      reply.headers(rateLimitHeaders(admission.endpoint, admission.account, 1));
      done(null, payload);
    }, done);
  };

  /** The hook of one route, which counts against `slug`. */
  const admitTo =
    (slug: string): onRequestHookHandler =>
    (request, reply, done) => {
      if (!request.auth) return done();
      const orgId = request.auth.orgId;
      // A callback hook: on the embedded store admission is synchronous (see RateLimiter.admit).
      settle(
        () =>
          chain(limiter.admit(orgId, slug), (admission) => {
            request.rateLimit = admission;
            reply.headers(rateLimitHeaders(admission.endpoint, admission.account));
            // spec 7 again: a request whose client went away before its answer was complete (a
            // search, a download) did not succeed for it. The release itself stays quiet when the
            // counters cannot be reached: the unit then stays counted.
            onClientGone(
              reply,
              () =>
                void limiter
                  .release(admission)
                  .catch((error: unknown) => request.log.warn({ err: error }, 'refund failed')),
            );
          }),
        done,
      );
    };

  // Route hooks, after authentication's (registered before).
  app.addHook('onRoute', (route) => {
    if (!isLimited(route)) return;
    catalog.register(route);
    if (!deps.enabled) return;
    addRouteHook(route, 'onRequest', admitTo(catalog.slugOf(route.url)));
    addRouteHook(route, 'onSend', refundFailure);
  });
}
