import { pino, type LoggerOptions } from 'pino';
import { buildApp } from './app.ts';
import { serverLogger } from './http/logging.ts';
import { serverUrl, type Config } from './config.ts';
import { createContainer } from './container.ts';
import { autovacuumWarnings } from './db/maintenance.ts';
import { startScheduler } from './jobs/scheduler.ts';

/**
 * `npm start` / `dragnet serve`: migrate, listen, run the scheduler and workers (unless
 * `withWorker` is false: API-only processes of a scale-out deployment), and stop cleanly on
 * SIGTERM or Ctrl-C.
 */
export async function serve(config: Config, options: { withWorker?: boolean } = {}): Promise<void> {
  // Background work (ANALYZE after an ingest, rate-limit flushes) logs to the server's JSON log.
  const background = pino(serverLogger(config.logLevel) as LoggerOptions);
  const container = await createContainer(config, {
    log: (message, error) =>
      error === undefined ? background.warn(message) : background.error({ err: error }, message),
  });
  const app = await buildApp(container, {
    logger: serverLogger(config.logLevel),
  });
  await app.listen({ host: config.host, port: config.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const base = serverUrl(config.host, port);
  // Before the scheduler's first run, so that every link sent from this store points here.
  await container.dashboardAddress.record(base);
  const log = (message: string, error?: unknown) =>
    error ? app.log.error({ err: error }, message) : app.log.info(message);
  const withWorker = options.withWorker !== false;
  const scheduler = withWorker ? startScheduler(container, { pollMs: config.schedulerPollMs, log }) : null;
  const collectors = withWorker ? container.collectors.start({ pollMs: config.schedulerPollMs, log }) : null;

  const hasUsers = (await container.users.list()).length > 0;
  const lines = [
    `Dragnet is listening on ${base} (store: ${container.store.engine} at ${container.store.location})`,
    `API docs: ${base}/docs   OpenAPI: ${base}/openapi.json`,
    hasUsers
      ? `Log in: curl -s -X POST ${base}/token/ -H 'content-type: application/json' -d '{"email":"…","password":"…"}'`
      : 'No users yet: run `npx dragnet demo` for a demo account, or `npx dragnet user create --org <name> --email <email>`.',
  ];
  process.stdout.write(lines.join('\n') + '\n');
  for (const warning of await autovacuumWarnings(container.store)) app.log.warn(warning);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    // Stop accepting connections and let in-flight requests and the current scheduler cycle
    // finish before closing the store.
    await app.close();
    await collectors?.stop();
    await scheduler?.stop();
    await container.close();
    process.exit(0);
  };
  // A shutdown that fails half-way must still end the process, and say why.
  const shutdownOrExit = (signal: NodeJS.Signals) => {
    shutdown(signal).catch((error: unknown) => {
      app.log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    });
  };
  process.once('SIGTERM', shutdownOrExit);
  process.once('SIGINT', shutdownOrExit);
}
