/**
 * Child-process entry for benchmarks: `servers.ts bare`, `servers.ts dragnet` or `servers.ts
 * dragnet-peer` (another API process on the store a `dragnet` child prepared). Listens on
 * HOST (127.0.0.1) and an ephemeral port, then reports `{ type: 'listening', url, … }` to the
 * parent over IPC. Stops on SIGTERM/SIGINT or when the parent goes away (IPC disconnect).
 */
import { randomBytes } from 'node:crypto';
import Fastify from 'fastify';
import { buildApp } from '../../src/app.ts';
import { serverLogger } from '../../src/http/logging.ts';
import { loadConfig } from '../../src/config.ts';
import { createContainer } from '../../src/container.ts';
import { ACCOUNT_SCOPE, serviceScope } from '../../src/modules/usage/limits.ts';

type Closer = () => Promise<void>;

const send = (message: Record<string, unknown>) => {
  if (process.send) process.send(message);
  else process.stdout.write(JSON.stringify(message) + '\n');
};

function stopOn(close: Closer): void {
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    const force = setTimeout(() => process.exit(1), 5_000);
    force.unref();
    close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.once('disconnect', stop);
}

/** The reference: a default Fastify instance (no logger, no plugins) with one small JSON route. */
async function startBare(host: string): Promise<void> {
  const app = Fastify();
  app.get('/bare', () => ({ status: 'ok', service: 'bare' }));
  await app.listen({ host, port: 0 });
  stopOn(() => app.close());
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  send({ type: 'listening', url: `http://${host}:${port}` });
}

/** High enough never to refuse a benchmark request, yet counted like any finite limit. */
const BENCH_LIMIT = 1_000_000_000;

/**
 * Dragnet as `dragnet serve` builds its API (src/main.ts): same container, same app, same logger
 * options, configured from the environment; no scheduler, like an API-only process of a
 * scale-out deployment (a fresh store has no rules for it to run anyway). Before listening it creates one user through the
 * same service the CLI uses and hands its credentials to the parent. The rate limiter stays
 * on (it is part of every /service/ request); the organization's limits on the account and on
 * the routes in BENCH_ROUTES are raised, as `dragnet org set-limits` would, so the load is not
 * refused.
 */
async function startDragnet(peer: boolean): Promise<void> {
  const config = loadConfig({ ...process.env, PORT: '0' });
  const container = await createContainer(config);
  const email = 'load@bench.dragnet.test';
  const password = peer ? null : randomBytes(16).toString('hex');
  const app = await buildApp(container, {
    logger: serverLogger(config.logLevel),
  });
  if (password) {
    const user = await container.users.create({ orgName: 'Bench', email, password });
    await container.limits.setOverride(user.org_id, ACCOUNT_SCOPE, 'second', BENCH_LIMIT);
    await container.limits.setOverride(user.org_id, ACCOUNT_SCOPE, 'month', BENCH_LIMIT);
    const routes = (process.env.BENCH_ROUTES ?? '/service/account/').split(',').filter(Boolean);
    for (const slug of new Set(routes.map((route) => container.usageCatalog.slugOf(route)))) {
      await container.limits.setOverride(user.org_id, serviceScope(slug), 'day', BENCH_LIMIT);
    }
  }
  await app.listen({ host: config.host, port: 0 });
  stopOn(async () => {
    await app.close();
    // app.close() resolves once the sockets are gone, but requests whose client hung up at the
    // end of the load may still be running: give them a moment before the store closes.
    await new Promise((resolve) => setTimeout(resolve, 500));
    await container.close();
  });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  send({
    type: 'listening',
    url: `http://${config.host}:${port}`,
    email,
    password,
    store: `${container.store.engine}`,
    logLevel: config.logLevel,
  });
}

const mode = process.argv[2];
const host = process.env.HOST || '127.0.0.1';
try {
  if (mode === 'bare') await startBare(host);
  else if (mode === 'dragnet' || mode === 'dragnet-peer') await startDragnet(mode === 'dragnet-peer');
  else throw new Error(`unknown server "${mode}" (bare | dragnet | dragnet-peer)`);
} catch (error) {
  send({ type: 'error', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.exit(1);
}
