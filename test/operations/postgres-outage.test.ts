import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../support/http.ts';
import { killServer, startServer, type ServerProcess } from '../support/server-process.ts';
import { startRelay, type TcpRelay } from '../support/tcp-relay.ts';
import { createTestApp, DEFAULT_PASSWORD, migratedStoreTemplate, type TestApp } from '../support/test-app.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';
import { waitFor } from '../support/wait.ts';

describe.skipIf(testEngine !== 'postgres')('PostgreSQL out of reach', () => {
  let location: TestStoreLocation;
  let t: TestApp;
  let relay: TcpRelay;
  let token: string;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    // A migrated store, and the app under test on it through the relay.
    location = await createTestStoreLocation({ template: await migratedStoreTemplate() });
    relay = await startRelay(new URL(location.databaseUrl!));
    t = await createTestApp({ location, env: { DRAGNET_DATABASE_URL: relay.url() } });
    await t.createUser({ org: 'Acme', email: 'alice@acme.test' });
    token = (await t.login('alice@acme.test')).access;
  });
  afterAll(async () => {
    await killServer(server);
    await t?.close();
    await relay?.close();
    await location?.drop();
  });

  it('while the database cannot be reached, requests answer 503 service_unavailable with Retry-After, never a 500; once it is back they succeed', async () => {
    const account = () => t.request({ method: 'GET', url: '/service/account/', token });
    expect((await account()).statusCode).toBe(200);

    await relay.cut();
    for (const response of [
      await account(),
      await account(),
      await t.request({ method: 'POST', url: '/token/', body: { email: 'alice@acme.test', password: 'x' } }),
    ]) {
      const body = expectError(response, 503, 'service_unavailable');
      expect(body.message).toMatch(/database is unreachable/);
      expect(response.headers['retry-after']).toMatch(/^\d+$/);
    }

    await relay.restore();
    expect((await account()).statusCode).toBe(200);
  });

  it('`npm start` (API, scheduler, workers) outlives seconds without its database: 503s meanwhile, then it serves again', async () => {
    server = await startServer({
      ...location.env,
      DRAGNET_DATABASE_URL: relay.url(),
      HOST: '127.0.0.1',
      PORT: '0',
      DRAGNET_SCHEDULER_POLL_MS: '100',
      DRAGNET_WORKER_HEARTBEAT_MS: '200',
    });
    // The server's clock is the real one: a token of its own.
    const login = await fetch(`${server.baseUrl}/token/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'alice@acme.test', password: DEFAULT_PASSWORD }),
    });
    const { access } = (await login.json()) as { access: string };
    const account = () =>
      fetch(`${server!.baseUrl}/service/account/`, { headers: { authorization: `Bearer ${access}` } });
    expect((await account()).status).toBe(200);

    await relay.cut();
    const started = Date.now();
    while (Date.now() - started < 3_000) {
      const response = await account();
      expect(response.status).toBe(503);
      expect(((await response.json()) as { code: string }).code).toBe('service_unavailable');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    // Health says so too, for the load balancer.
    expect((await fetch(`${server.baseUrl}/readyz`)).status).toBe(503);

    await relay.restore();
    await waitFor('the server to serve again', async () => (await account()).status === 200);
    expect(server.child.exitCode).toBeNull();
    expect(server.output().stderr).not.toMatch(/Uncaught|unhandled/i);
  });
});
