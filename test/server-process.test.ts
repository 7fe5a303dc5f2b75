import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUserByCli } from './support/cli.ts';
import { startServer, type ServerProcess } from './support/server-process.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from './support/test-store.ts';
import { scaled, waitFor } from './support/wait.ts';

const SLOW_MS = scaled(120_000);
const PASSWORD = 'a long enough password 1';

describe(`the server process (${testEngine})`, () => {
  let location: TestStoreLocation;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    location = await createTestStoreLocation();
    await createUserByCli(location.env, { org: 'Acme', email: 'alice@acme.test', password: PASSWORD });
    // At the default log level, as `npm start` runs it.
    server = await startServer({ ...location.env, HOST: '127.0.0.1', PORT: '0', DRAGNET_LOG_LEVEL: 'info' });
  }, SLOW_MS);

  afterAll(async () => {
    if (server && server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGKILL');
      await server.exited;
    }
    await location.drop();
  });

  const login = (email: string, password: string) =>
    fetch(`${server!.baseUrl}/token/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });

  it('announces the real port it bound and where the docs are', () => {
    const { baseUrl } = server!;
    expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(baseUrl).not.toMatch(/:0$/);
    expect(server!.output().stdout).toContain(`${baseUrl}/docs`);
  });

  it('logs in over real HTTP and serves the account', async () => {
    const response = await login('alice@acme.test', PASSWORD);
    expect(response.status).toBe(200);
    const { access } = (await response.json()) as { access: string };

    const account = await fetch(`${server!.baseUrl}/service/account/`, {
      headers: { authorization: `Bearer ${access}` },
    });
    expect(account.status).toBe(200);
    expect(account.headers.get('x-request-id')).toEqual(expect.any(String));
    expect(await account.json()).toMatchObject({ email: 'alice@acme.test', organization: 'Acme' });

    const anonymous = await fetch(`${server!.baseUrl}/service/account/`);
    expect(anonymous.status).toBe(401);
  });

  it('logs one JSON line per request with its request id, and no credentials', async () => {
    const requestId = 'log-check-0001';
    const response = await fetch(`${server!.baseUrl}/token/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': requestId },
      body: JSON.stringify({ email: 'alice@acme.test', password: PASSWORD }),
    });
    const { access } = (await response.json()) as { access: string };
    await fetch(`${server!.baseUrl}/service/account/`, {
      headers: { authorization: `Bearer ${access}`, 'x-request-id': `${requestId}-b` },
    });

    type LogEntry = {
      reqId?: string;
      msg: string;
      req?: { method: string; url: string };
      res?: { statusCode: number };
    };
    const logEntries = () =>
      server!
        .output()
        .stdout.split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as LogEntry);
    // A line is written once its response has gone out: wait for it rather than race it.
    await waitFor('the second request logged', () => logEntries().some((entry) => entry.reqId === `${requestId}-b`), {
      everyMs: 50,
    });
    const entries = logEntries();
    const stdout = server!.output().stdout;
    const login = entries.filter((entry) => entry.reqId === requestId);
    expect(login).toEqual([
      expect.objectContaining({
        msg: 'request completed',
        req: expect.objectContaining({ method: 'POST', url: '/token/' }),
        res: { statusCode: 200 },
      }),
    ]);
    expect(entries.filter((entry) => entry.reqId === `${requestId}-b`)).toHaveLength(1);
    expect(stdout).not.toContain(PASSWORD);
    expect(stdout).not.toContain(access);
  });

  it(
    'sees users the CLI creates while it runs',
    async () => {
      await createUserByCli(location.env, { org: 'Acme', email: 'bob@acme.test', password: PASSWORD });
      expect((await login('bob@acme.test', PASSWORD)).status).toBe(200);
    },
    SLOW_MS,
  );

  it(
    'stops cleanly with exit code 0 on SIGTERM',
    async () => {
      const ready = await fetch(`${server!.baseUrl}/readyz`);
      expect(ready.status).toBe(200);

      server!.child.kill('SIGTERM');
      const exit = await server!.exited;
      expect(exit, server!.output().stderr).toEqual({ code: 0, signal: null });
      await expect(fetch(`${server!.baseUrl}/healthz`)).rejects.toThrow();
    },
    SLOW_MS,
  );
});
