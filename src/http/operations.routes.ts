import { createHash, timingSafeEqual } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest, onResponseHookHandler } from 'fastify';
import ipaddr from 'ipaddr.js';
import type { Redis } from 'ioredis';
import type { ReplicaStatus } from '../db/read-replicas.ts';
import type { Store } from '../db/store.ts';
import { AppError } from '../lib/errors.ts';
import type { Metrics } from '../lib/metrics.ts';
import { addRouteHook } from './route-hooks.ts';
import { withErrors } from './schemas.ts';

/** A dependency that does not answer within this is counted as down: a probe must not hang. */
const CHECK_TIMEOUT_MS = 2000;

const Health = Type.Object({ status: Type.String() });
const Readiness = Type.Object({
  status: Type.String({ description: 'ready, or unavailable when a check failed' }),
  store: Type.String({ description: 'The store engine: sqlite or postgres' }),
  checks: Type.Record(Type.String(), Type.String(), {
    description: 'Each dependency checked (store, redis when configured): ok or failed',
  }),
  failed: Type.Array(Type.String(), { description: 'The checks that failed' }),
  replicas: Type.Optional(
    Type.Array(
      Type.Object({
        replica: Type.String({ description: 'host:port/database of a DRAGNET_DATABASE_READ_URLS entry' }),
        state: Type.String({
          description:
            'up; lagging (it had not replayed what a read needed in time: skipped until it has); down (it did not answer). Either way the primary serves its reads',
        }),
        lag_bytes: Type.Union([Type.Number(), Type.Null()], {
          description: 'WAL bytes written on the primary and not yet replayed there',
        }),
        lag_seconds: Type.Union([Type.Number(), Type.Null()], {
          description: 'Seconds since it last replayed a transaction, while it is behind; 0 when caught up',
        }),
      }),
      {
        description:
          'With DRAGNET_DATABASE_READ_URLS: each read replica. A replica down or lagging leaves the process ready',
      },
    ),
  ),
});

export interface OperationsOptions {
  store: Store;
  metrics: Metrics;
  /** Checked by /readyz when rate-limit counts live in Redis. */
  redisUrl?: string;
  /** When set, /metrics requires `Authorization: Bearer <token>`; else it answers loopback clients only. */
  metricsToken?: string;
}

function withTimeout(probe: Promise<unknown>): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  return Promise.race([probe, timeout]).finally(() => clearTimeout(timer));
}

/**
 * A Redis connection of its own for the readiness check, opened on the first check: the rate
 * limiter's connection queues commands while Redis is away, and a probe must see that at once.
 */
function redisProbe(url: string) {
  let client: Redis | undefined;
  return {
    async ping() {
      if (!client) {
        // Loaded on the first check, as the rate limiter loads it: start-up stays free of it.
        const { Redis } = await import('ioredis');
        client = new Redis(url, { commandTimeout: CHECK_TIMEOUT_MS, maxRetriesPerRequest: 1 });
        // Connection errors surface as a failed ping; unhandled, ioredis would print each one.
        client.on('error', () => undefined);
      }
      await client.ping();
    },
    async close() {
      client?.disconnect();
    },
  };
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Proxies on the same host connect from loopback too: a request a proxy forwarded (it carries
 * forwarding headers) is not local, whatever its socket says.
 */
function isLocalRequest(request: FastifyRequest): boolean {
  const headers = request.headers;
  if (headers['x-forwarded-for'] !== undefined || headers.forwarded !== undefined || headers['x-real-ip'] !== undefined)
    return false;
  const address = request.socket.remoteAddress;
  return address !== undefined && ipaddr.isValid(address) && ipaddr.process(address).range() === 'loopback';
}

function authorizeMetrics(request: FastifyRequest, token: string | undefined) {
  if (token === undefined) {
    if (!isLocalRequest(request))
      throw new AppError('forbidden', '/metrics answers loopback clients only unless DRAGNET_METRICS_TOKEN is set');
    return;
  }
  const sent = /^Bearer (.+)$/i.exec(request.headers.authorization ?? '')?.[1];
  if (sent === undefined || !timingSafeEqual(digest(sent), digest(token))) {
    throw new AppError('unauthorized', '/metrics needs Authorization: Bearer <DRAGNET_METRICS_TOKEN>');
  }
}

/**
 * What operators and orchestrators poll (docs/operations.md): liveness, readiness of the store
 * (and Redis), and the Prometheus metrics. Served by the API and by `dragnet worker --metrics-port`.
 */
export function operationsRoutes(options: OperationsOptions): FastifyPluginAsyncTypebox {
  const { store, metrics } = options;
  return async (app) => {
    const redis = options.redisUrl ? redisProbe(options.redisUrl) : null;
    app.addHook('onClose', async () => redis?.close());
    const checks: Record<string, () => Promise<unknown>> = {
      // A cheap query on the store's own pool or connection: what every request needs.
      store: () => store.ping(),
      ...(redis ? { redis: () => redis.ping() } : {}),
    };

    app.get(
      '/healthz',
      {
        schema: {
          operationId: 'healthz',
          tags: ['operations'],
          summary: 'Liveness: the process is up (it checks nothing else)',
          response: { 200: Health },
        },
      },
      () => ({ status: 'ok' }),
    );

    app.get(
      '/readyz',
      {
        schema: {
          operationId: 'readyz',
          tags: ['operations'],
          summary: 'Readiness: the store answers a query, and Redis a ping when configured; 503 names what failed',
          response: { 200: Readiness, 503: Readiness },
        },
      },
      async (request, reply) => {
        const names = Object.keys(checks);
        const outcomes = await Promise.allSettled(names.map((name) => withTimeout(checks[name]!())));
        const failed = names.filter((_name, i) => outcomes[i]!.status === 'rejected');
        outcomes.forEach((outcome, i) => {
          // The reason goes to the log, not the body: it can name internal hosts.
          if (outcome.status === 'rejected')
            request.log.warn({ check: names[i], err: outcome.reason }, 'readiness check failed');
        });
        const replicas = store.reads.enabled
          ? await withTimeout(store.reads.check()).then(
              (status) => status as ReplicaStatus[],
              () => store.reads.status(),
            )
          : null;
        const body = {
          status: failed.length ? 'unavailable' : 'ready',
          store: store.engine,
          checks: Object.fromEntries(names.map((name) => [name, failed.includes(name) ? 'failed' : 'ok'])),
          failed,
          ...(replicas
            ? {
                replicas: replicas.map((replica) => ({
                  replica: replica.replica,
                  state: replica.state,
                  lag_bytes: replica.lagBytes,
                  lag_seconds: replica.lagSeconds,
                })),
              }
            : {}),
        };
        return reply.code(failed.length ? 503 : 200).send(body);
      },
    );

    app.get(
      '/metrics',
      {
        schema: {
          operationId: 'metrics',
          tags: ['operations'],
          summary: 'Prometheus metrics of this process (loopback clients, or a bearer DRAGNET_METRICS_TOKEN)',
          response: withErrors({ 200: Type.String({ description: 'Prometheus text exposition format' }) }, [401, 403]),
        },
      },
      async (request, reply) => {
        authorizeMetrics(request, options.metricsToken);
        const text = await metrics.render();
        return reply.type(metrics.contentType).send(text);
      },
    );
  };
}

/**
 * One histogram observation per response, labelled with the route pattern (`/service/x/:id/`,
 * never the raw URL, which would make a series per id), and a count of limiter refusals.
 */
export function registerRequestMetrics(app: FastifyInstance, metrics: Metrics) {
  // Callback hooks: they run on every request and need no promise. Each route's own hook knows
  // its pattern; the global one counts only the requests that found no route.
  const observe = (route: string, request: FastifyRequest, reply: FastifyReply) =>
    metrics.request(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
  app.addHook('onRoute', (route) => {
    const pattern = route.url;
    addRouteHook(route, 'onResponse', ((request, reply, done) => {
      observe(pattern, request, reply);
      done();
    }) satisfies onResponseHookHandler);
  });
  app.addHook('onResponse', (request, reply, done) => {
    if (request.is404) observe('unmatched', request, reply);
    done();
  });
  app.addHook('onError', (request, _reply, error, done) => {
    if (error instanceof AppError && (error.code === 'rate_limited' || error.code === 'too_many_attempts')) {
      metrics.refused(request.routeOptions.url ?? 'unmatched', error.code);
    }
    done();
  });
}
