import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUserByCli, runCli } from '../support/cli.ts';
import { startServer, type ServerProcess } from '../support/server-process.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';
import { scaled } from '../support/wait.ts';

const SLOW_MS = scaled(180_000);
const PASSWORD = 'a long enough password for two servers';
/** spec: a disabled user is refused "at once"; the bound across processes is a second. */
const WITHIN_MS = 1_000;

/**
 * Every API process keeps the user behind a token and its organization in memory (on
 * PostgreSQL, until a change notification says otherwise). Two real API processes on one
 * store, a third process (the CLI) changing the rows: each server sees the change within a
 * second, including after its notification connection was cut.
 */
describe(`cached users and organizations across processes (${testEngine})`, () => {
  let location: TestStoreLocation;
  const servers: ServerProcess[] = [];
  const tokens: string[] = [];

  const cli = async (...args: string[]) => {
    const result = await runCli(args, { env: location.env });
    expect(result.code, result.stderr).toBe(0);
  };

  /** Logs in on every server (a disabled user's tokens stay revoked after it is enabled again). */
  async function logIn(): Promise<void> {
    tokens.length = 0;
    for (const server of servers) {
      const login = await fetch(`${server.baseUrl}/token/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'alice@acme.test', password: PASSWORD }),
      });
      expect(login.status).toBe(200);
      tokens.push(((await login.json()) as { access: string }).access);
    }
  }

  const account = (index: number) =>
    fetch(`${servers[index]!.baseUrl}/service/account/`, { headers: { authorization: `Bearer ${tokens[index]}` } });

  /** Polls every server until `accept` holds for its answer; the slowest server's delay in ms. */
  async function delayUntil(accept: (response: Response, body: Record<string, unknown>) => boolean): Promise<number> {
    const started = Date.now();
    const delays = await Promise.all(
      servers.map(async (_server, index) => {
        for (;;) {
          const response = await account(index);
          const body = (await response.json()) as Record<string, unknown>;
          if (accept(response, body)) return Date.now() - started;
          if (Date.now() - started > scaled(10_000))
            throw new Error(`server ${index} still answers ${response.status} ${JSON.stringify(body)}`);
          // Ten requests a second per server: two servers stay under the account cap of 25 a second.
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }),
    );
    return Math.max(...delays);
  }

  beforeAll(async () => {
    location = await createTestStoreLocation();
    await createUserByCli(location.env, { org: 'Acme', email: 'alice@acme.test', password: PASSWORD });
    const env = { ...location.env, HOST: '127.0.0.1', PORT: '0' };
    servers.push(
      ...(await Promise.all([
        startServer(env, scaled(120_000), ['--no-worker']),
        startServer(env, scaled(120_000), ['--no-worker']),
      ])),
    );
    await logIn();
  }, SLOW_MS);

  afterAll(async () => {
    for (const server of servers) {
      if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
      await server.exited;
    }
    await location?.drop();
  });

  it(
    'a user disabled by another process is refused by every server within a second, and can log in again once enabled',
    async () => {
      // Several answers each, so the row is in every server's cache before it changes.
      for (let i = 0; i < 5; i++) for (const index of [0, 1]) expect((await account(index)).status).toBe(200);

      await cli('user', 'disable', 'alice@acme.test');
      expect(await delayUntil((response) => response.status === 401)).toBeLessThan(WITHIN_MS);

      await cli('user', 'enable', 'alice@acme.test');
      await logIn();
      for (const index of [0, 1]) expect((await account(index)).status).toBe(200);
    },
    SLOW_MS,
  );

  it(
    'an organization renamed by another process shows under its new name on every server within a second',
    async () => {
      for (const index of [0, 1]) expect(await (await account(index)).json()).toMatchObject({ organization: 'Acme' });
      await cli('org', 'set', 'Acme', '--rename', 'Acme Corp');
      expect(await delayUntil((_response, body) => body.organization === 'Acme Corp')).toBeLessThan(WITHIN_MS);
    },
    SLOW_MS,
  );

  it.runIf(testEngine === 'postgres')(
    'after its notification connection is cut, a server still refuses a disabled user within a second',
    async () => {
      const admin = new pg.Client({ connectionString: location.databaseUrl });
      await admin.connect();
      try {
        const cut = await admin.query(
          "select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query ilike 'listen %'",
        );
        expect(cut.rowCount).toBe(servers.length);
      } finally {
        await admin.end();
      }
      // Served meanwhile: reads go to the store until the server listens again.
      for (const index of [0, 1]) expect((await account(index)).status).toBe(200);
      await cli('user', 'disable', 'alice@acme.test');
      expect(await delayUntil((response) => response.status === 401)).toBeLessThan(WITHIN_MS);
    },
    SLOW_MS,
  );
});
