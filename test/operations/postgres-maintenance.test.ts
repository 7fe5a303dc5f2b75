import { writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { killServer, startServer, type ServerProcess } from '../support/server-process.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';
import { scaled, waitFor } from '../support/wait.ts';

const SLOW_MS = scaled(120_000);

// PostgreSQL's planner statistics and autovacuum; the embedded store has neither.
describe.skipIf(testEngine !== 'postgres')(
  'PostgreSQL upkeep: ANALYZE after a large ingest, the autovacuum warning',
  () => {
    let location: TestStoreLocation;
    let client: pg.Client;
    let server: ServerProcess | undefined;

    beforeAll(async () => {
      location = await createTestStoreLocation();
      const migrated = await runCli(['migrate'], { env: location.env });
      expect(migrated.code, migrated.stderr).toBe(0);
      client = new pg.Client({ connectionString: location.databaseUrl });
      await client.connect();
    }, SLOW_MS);

    afterAll(async () => {
      await killServer(server);
      await client?.end();
      await location?.drop();
    });

    const lastAnalyze = async (table: string) =>
      (
        await client.query<{ last_analyze: Date | null }>(
          'select last_analyze from pg_stat_user_tables where relname = $1',
          [table],
        )
      ).rows[0]?.last_analyze ?? null;

    it(
      'an ingest that wrote many rows to a table analyzes it; a table it wrote one row to is left to autovacuum',
      async () => {
        const file = path.join(location.dataDir, 'combo.txt');
        writeFileSync(
          file,
          Array.from({ length: 1500 }, (_, i) => `user${i}@analyze-corp.test:password-${i}`).join('\n') + '\n',
        );
        const ingested = await runCli(['--json', 'ingest', 'filtered_leak', file], { env: location.env });
        expect(ingested.code, ingested.stderr).toBe(0);
        expect(JSON.parse(ingested.stdout)).toMatchObject({ added: 1500 });

        // ANALYZE itself sets the planner's row count; the statistics view hears of it a moment later.
        const planned = await client.query<{ reltuples: number }>(
          "select reltuples from pg_class where relname = 'leak_credentials'",
        );
        expect(Number(planned.rows[0]!.reltuples)).toBe(1500);
        await waitFor(
          'last_analyze of leak_credentials',
          async () => (await lastAnalyze('leak_credentials')) !== null,
          { everyMs: 50 },
        );
        expect(await lastAnalyze('leak_files')).toBeNull();
      },
      SLOW_MS,
    );

    it(
      'the server warns at start when autovacuum is off on the server or on one of its tables',
      async () => {
        await client.query('alter table alert_rules set (autovacuum_enabled = false)');
        const serverWide = (await client.query<{ autovacuum: string }>('show autovacuum')).rows[0]!.autovacuum;
        server = await startServer({ ...location.env, HOST: '127.0.0.1', PORT: '0', DRAGNET_LOG_LEVEL: 'warn' });
        const warnings = () =>
          server!
            .output()
            .stdout.split('\n')
            .filter((line) => line.startsWith('{'))
            .map((line) => JSON.parse(line) as { level: number; msg: string })
            .filter((entry) => entry.level === 40)
            .map((entry) => entry.msg);
        await waitFor('the autovacuum warning', () => warnings().some((msg) => msg.includes('disabled on tables')));
        expect(warnings()).toContain(
          'PostgreSQL autovacuum is disabled on tables: alert_rules (ALTER TABLE … RESET (autovacuum_enabled))',
        );
        expect(warnings().some((msg) => msg.startsWith('PostgreSQL autovacuum is off'))).toBe(serverWide !== 'on');
      },
      SLOW_MS,
    );
  },
);
