import type { FastifyInstance, FastifyRequest } from 'fastify';
import { chain, settle } from '../lib/maybe-promise.ts';
import { rateLimitHeaders, type Admission, type RateLimiter, type UsageCatalog } from '../modules/usage/index.ts';
import { SERVICE_PREFIX } from './auth.plugin.ts';
import { onClientGone } from './client-gone.ts';

declare module 'fastify' {
  interface FastifyRequest {
    rateLimit: Admission | null;
  }
  interface FastifyContextConfig {
    /** The usage service a route counts against (several routes may share one). */
    rateLimit?: { service: string; name?: string };
  }
}

const isSuccess = (status: number) => status >= 200 && status < 300;

/**
 * Rate limiting of every /service/ route (spec 8.1, docs/api.md "Rate limits"). It runs in
 * onRequest right after authentication, so a refused request never reaches validation or its
 * handler; the reservation is given back when the response is not a 2xx, or when the client
 * leaves before it has the whole response.
 */
export function registerRateLimiting(app: FastifyInstance, deps: { limiter: RateLimiter; catalog: UsageCatalog; enabled: boolean }) {
  const { limiter, catalog } = deps;
  app.decorateRequest('rateLimit', null);

  app.addHook('onRoute', (route) => {
    if (route.url.startsWith(SERVICE_PREFIX)) catalog.register(route);
  });

  if (!deps.enabled) return;

  // A callback hook: on the embedded store admission is synchronous (see RateLimiter.admit).
  app.addHook('onRequest', (request: FastifyRequest, reply, done) => {
    const url = request.routeOptions.url;
    if (!url?.startsWith(SERVICE_PREFIX) || !request.auth) return done();
    const orgId = request.auth.orgId;
    settle(
      () =>
        chain(limiter.admit(orgId, catalog.slugOf(url)), (admission) => {
          request.rateLimit = admission;
          reply.headers(rateLimitHeaders(admission.endpoint, admission.account));
          // spec 7 again: a request whose client went away before its answer was complete (a
          // search, a download) did not succeed for it. The release itself stays quiet when the
          // counters cannot be reached: the unit then stays counted.
          onClientGone(reply, () => void limiter.release(admission).catch((error: unknown) => request.log.warn({ err: error }, 'refund failed')));
        }),
      done,
    );
  });

  // Not async: most responses are 2xx and need nothing here, and an async hook would cost every
  // request a promise.
  app.addHook('onSend', (request, reply, payload, done) => {
    const admission = request.rateLimit;
    if (!admission || admission.released || isSuccess(reply.statusCode)) return done(null, payload);
    // spec 7: failed calls are refunded and do not count against limits.
    limiter.release(admission).then(() => {
      reply.headers(rateLimitHeaders(admission.endpoint, admission.account, 1));
      done(null, payload);
    }, done);
  });
}
