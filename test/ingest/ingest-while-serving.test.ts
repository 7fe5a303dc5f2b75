import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUserByCli } from '../support/cli.ts';
import { spawnCli } from '../support/cli-process.ts';
import { killServer, startServer, type ServerProcess } from '../support/server-process.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';
import { scaled } from '../support/wait.ts';

const SLOW_MS = scaled(120_000);
const PASSWORD = 'a long enough password 1';
// Enough for an ingest of several seconds (PostgreSQL ingests slower, and has no one write lock): one transaction of it held SQLite's write lock past
// the server's busy timeout (lowered below so that the test needs seconds, not a minute).
const MESSAGES = testEngine === 'sqlite' ? 40_000 : 2_000;
// Both are ceilings for a busy 2-core machine, stretched by DRAGNET_TEST_TIME_SCALE like every deadline.
const BUSY_TIMEOUT_MS = scaled(1_500);
// A login may wait for an ingest's batch, never for the whole ingest.
const LOGIN_WITHIN_MS = scaled(3_000);

describe(`a large CLI ingest while the server serves (${testEngine})`, () => {
  let location: TestStoreLocation;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    location = await createTestStoreLocation();
    await createUserByCli(location.env, { org: 'Acme', email: 'alice@acme.test', password: PASSWORD });
    server = await startServer({
      ...location.env,
      HOST: '127.0.0.1',
      PORT: '0',
      // An unhandled rejection (a failed rate-limit flush) ends the process.
      NODE_OPTIONS: '--unhandled-rejections=strict',
      DRAGNET_SQLITE_BUSY_TIMEOUT_MS: String(BUSY_TIMEOUT_MS),
    });
  }, SLOW_MS);

  afterAll(async () => {
    await killServer(server);
    await location?.drop();
  });

  it(
    'answers logins and rate-limited requests below 500, in time, and stays up',
    async () => {
      const file = path.join(location.dataDir, 'bulk.jsonl');
      const lines: string[] = [];
      for (let i = 1; i <= MESSAGES; i++) {
        const channel = i % 4;
        lines.push(
          JSON.stringify({
            channel: { title: `Bulk ${channel}`, username: `bulk${channel}` },
            message_id: i,
            date: 1_709_290_800 + i,
            text: `bulk message ${i} selling fresh logs of acme-bank.com, see https://x${i % 97}.example/`,
          }),
        );
      }
      writeFileSync(file, lines.join('\n') + '\n');

      const base = server!.baseUrl;
      const login = async () => {
        const started = Date.now();
        const response = await fetch(`${base}/token/`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: 'alice@acme.test', password: PASSWORD }),
        });
        return { response, ms: Date.now() - started };
      };
      const first = await login();
      expect(first.response.status).toBe(200);
      const { access } = (await first.response.json()) as { access: string };

      const ingest = spawnCli(['--json', 'ingest', 'messenger', file], { env: location.env, timeoutMs: SLOW_MS });
      let ingestDone = false;
      const ingested = ingest.done.finally(() => (ingestDone = true));

      const statuses: number[] = [];
      const loginStatuses: number[] = [];
      const loginTimes: number[] = [];
      let rounds = 0;
      while (!ingestDone) {
        const [signedIn, usage, categories] = await Promise.all([
          login(),
          fetch(`${base}/service/get_usage_limits/`, { headers: { authorization: `Bearer ${access}` } }),
          fetch(`${base}/service/messenger-channels-categories/`, { headers: { authorization: `Bearer ${access}` } }),
        ]);
        statuses.push(usage.status, categories.status);
        loginStatuses.push(signedIn.response.status);
        loginTimes.push(signedIn.ms);
        await Promise.all([signedIn.response.arrayBuffer(), usage.arrayBuffer(), categories.arrayBuffer()]);
        rounds++;
      }

      const result = await ingested;
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ failed: 0, messages_added: MESSAGES });
      // The requests really overlapped the ingest.
      expect(rounds).toBeGreaterThan(2);
      // 429 once the organization's default limits are used up; never a 5xx.
      expect(statuses.filter((status) => status !== 200 && status !== 429)).toEqual([]);
      expect(loginStatuses.filter((status) => status !== 200)).toEqual([]);
      expect(Math.max(...loginTimes)).toBeLessThan(LOGIN_WITHIN_MS);
      // The rate-limit counters' flushes met the ingest's lock and the process lived on.
      expect(server!.child.exitCode).toBeNull();
      expect(server!.child.signalCode).toBeNull();
      expect((await login()).response.status).toBe(200);
    },
    SLOW_MS,
  );
});
