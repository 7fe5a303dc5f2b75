import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyServerOptions } from 'fastify';
import type { Container } from './container.ts';
import { registerAuthentication } from './http/auth.plugin.ts';
import { registerJsonCompression } from './http/compression.ts';
import { createDashboard } from './http/dashboard.ts';
import { registerErrorHandling } from './http/error-handler.ts';
import { answerConnect, protocolErrorOptions } from './http/protocol-errors.ts';
import { AccessLog, lazyRequestLogger } from './http/logging.ts';
import { headerDeadlineOptions, registerBodyDeadlines } from './http/request-deadlines.ts';
import { registerRateLimiting } from './http/rate-limit.plugin.ts';
import { guardDocumentation } from './http/security-headers.ts';
import { operationsRoutes, registerRequestMetrics } from './http/operations.routes.ts';
import { ErrorBody } from './http/schemas.ts';
import { createSerializerCompiler } from './http/serialization.ts';
import { createValidatorCompiler, findNulCharacter, MAX_JSON_DEPTH, nestsDeeperThan } from './http/validation.ts';
import { AppError, validationError } from './lib/errors.ts';

export interface AppOptions {
  logger?: FastifyServerOptions['logger'];
}

export async function buildApp(container: Container, options: AppOptions = {}) {
  const app = Fastify({
    logger: options.logger ?? false,
    logController: new AccessLog(),
    // Without a logger Fastify makes no child per request; with one, only a request that logs does.
    ...(options.logger ? { childLoggerFactory: lazyRequestLogger } : {}),
    bodyLimit: container.config.bodyLimitBytes,
    trustProxy: container.config.trustProxy,
    // A client's X-Request-Id is kept when it looks like an id; anything else gets a new one.
    requestIdHeader: false,
    genReqId: (request) => {
      const sent = request.headers['x-request-id'];
      return typeof sent === 'string' && /^[\w.:-]{1,128}$/.test(sent) ? sent : randomUUID();
    },
    ajv: { customOptions: { removeAdditional: false } },
    ...protocolErrorOptions,
    ...headerDeadlineOptions(container.config.requestDeadlines),
  }).withTypeProvider<TypeBoxTypeProvider>();
  answerConnect(app);
  registerBodyDeadlines(app, container.config.requestDeadlines);

  // Fastify's own JSON parser (prototype poisoning refused), behind a nesting check: JSON.parse
  // recurses, and a body nested 100,000 deep would exhaust its stack (a 500) before any schema ran.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body.toString();
    if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
      done(new AppError('bad_request', `body nests deeper than ${MAX_JSON_DEPTH} levels`), undefined);
      return;
    }
    // Fastify's default parser answers through done; its type also allows a promise, which it never returns.
    // eslint-disable-next-line @typescript-eslint/no-floating-promises
    parseJson(request, text, done);
  });

  app.addSchema(ErrorBody);
  app.setValidatorCompiler(createValidatorCompiler([ErrorBody]));
  app.setSerializerCompiler(createSerializerCompiler([ErrorBody]));
  const dashboard = createDashboard(container.config.dashboardDir);
  registerErrorHandling(app, { appShell: dashboard.serveAppShell });
  registerRequestMetrics(app, container.metrics);
  // Callback hooks, not async ones: they run on every request and need no promise.
  app.addHook('preValidation', (request, _reply, done) => {
    const field = findNulCharacter(request.body) ?? findNulCharacter(request.query) ?? findNulCharacter(request.params);
    done(field ? validationError(field, 'must not contain the NUL character') : undefined);
  });
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  registerJsonCompression(app);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Dragnet API',
        version: '1',
        description: 'Threat-intelligence search and monitoring. Choices the spec leaves open: docs/api.md.',
      },
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: 'An access token (a JWT from POST /token/) or an API key (dgk_…, docs/api.md "API keys")',
          },
          apiKeyBasic: {
            type: 'http',
            scheme: 'basic',
            description: 'TAXII and MISP feed routes: an API key as the password',
          },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  // The documentation in a scope of its own, whose every response carries its security headers.
  await app.register(async (docs) => {
    guardDocumentation(docs);
    await docs.register(swaggerUi, { routePrefix: '/docs' });
    docs.get('/openapi.json', { schema: { hide: true } }, () => app.swagger());
  });

  registerAuthentication(app, {
    auth: container.auth,
    organizations: container.organizations,
    apiKeys: container.apiKeys,
  });
  registerRateLimiting(app, {
    limiter: container.limiter,
    catalog: container.usageCatalog,
    enabled: container.config.rateLimitsEnabled,
  });

  await app.register(operationsRoutes(operationsOptions(container)));
  for (const routes of container.routes) await app.register(routes);
  await dashboard.register(app);
  return app;
}

export type App = Awaited<ReturnType<typeof buildApp>>;

/** What /healthz, /readyz and /metrics need, in the API and in `dragnet worker --metrics-port`. */
export const operationsOptions = (container: Container) => ({
  store: container.store,
  metrics: container.metrics,
  redisUrl: container.config.redisUrl,
  metricsToken: container.config.metricsToken,
});
