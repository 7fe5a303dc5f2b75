import Fastify from 'fastify';
import { operationsOptions } from './app.ts';
import type { Container } from './container.ts';
import { registerErrorHandling } from './http/error-handler.ts';
import { serverLogger } from './http/logging.ts';
import { operationsRoutes, registerRequestMetrics } from './http/operations.routes.ts';
import { ErrorBody } from './http/schemas.ts';

/**
 * `dragnet worker --metrics-port`: a worker has no API, but Prometheus and an orchestrator still
 * need its metrics (rule runs, deliveries, collectors) and health, on a port of its own.
 */
export async function startOperationsServer(container: Container, options: { host: string; port: number }) {
  // The API's JSON log, for what the probes log (why a readiness check failed), not per request.
  const app = Fastify({ logger: serverLogger(container.config.logLevel), disableRequestLogging: true });
  app.addSchema(ErrorBody);
  registerErrorHandling(app);
  registerRequestMetrics(app, container.metrics);
  await app.register(operationsRoutes(operationsOptions(container)));
  await app.listen({ host: options.host, port: options.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  return {
    url: `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`,
    close: () => app.close(),
  };
}
