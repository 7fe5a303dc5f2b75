import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';

/**
 * Store-backed tests run on the embedded store by default and on PostgreSQL when
 * DRAGNET_TEST_DATABASE_URL names a server (an admin connection, e.g. .../postgres):
 * each test store is then a fresh database, dropped afterwards.
 */
export const testDatabaseAdminUrl = process.env.DRAGNET_TEST_DATABASE_URL || undefined;
export const testEngine = testDatabaseAdminUrl ? 'postgres' : 'sqlite';

export interface TestStoreLocation {
  dataDir: string;
  databaseUrl?: string;
  env: Record<string, string>;
  drop(): Promise<void>;
}

/**
 * A fresh store location. `adminUrl` forces a PostgreSQL store on that server even when the
 * suite runs on the embedded store (for tests that need several processes on one store).
 */
export async function createTestStoreLocation(
  options: { adminUrl?: string; template?: TestStoreLocation; isTemplate?: boolean } = {},
): Promise<TestStoreLocation> {
  const adminUrl = options.adminUrl ?? testDatabaseAdminUrl;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'dragnet-test-'));
  if (options.template)
    cpSync(options.template.dataDir, dataDir, { recursive: true, filter: (file) => !file.endsWith('-lock') });
  let databaseUrl: string | undefined;
  let databaseName: string | undefined;
  if (adminUrl) {
    databaseName = `${options.isTemplate ? templatePrefix() : 'dragnet_test_'}${randomBytes(6).toString('hex')}`;
    const template = options.template?.databaseUrl
      ? ` template ${new URL(options.template.databaseUrl).pathname.slice(1)}`
      : '';
    await adminQuery(adminUrl, `create database ${databaseName}${template}`);
    const url = new URL(adminUrl);
    url.pathname = `/${databaseName}`;
    databaseUrl = url.toString();
  }
  return {
    dataDir,
    databaseUrl,
    env: {
      DRAGNET_DATA_DIR: dataDir,
      DRAGNET_SECRET_KEY: 'test-master-key-that-is-long-enough-0123456789',
      // Every test's SMTP servers, webhook receivers and feeds listen on loopback, which the
      // outbound guard refuses unless allowed; the guard's own tests set their own list.
      DRAGNET_OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
      ...(databaseUrl ? { DRAGNET_DATABASE_URL: databaseUrl } : {}),
    },
    async drop() {
      rmSync(dataDir, { recursive: true, force: true });
      if (databaseName) await adminQuery(adminUrl!, `drop database if exists ${databaseName} with (force)`);
    },
  };
}

/**
 * Template stores' databases: each test process makes one, and the suite's teardown drops those
 * of its own run (the global setup names the run), not those of another suite running beside it.
 */
const templatePrefix = (run = process.env.DRAGNET_TEST_RUN ?? `pid${process.pid}`) => `dragnet_template_${run}_`;

/** Names this test run, for the test processes it starts (the global setup). */
export function nameTestRun(): string {
  process.env.DRAGNET_TEST_RUN ??= randomBytes(4).toString('hex');
  return process.env.DRAGNET_TEST_RUN;
}

/** Drops the template databases of a finished test run (the global setup's teardown). */
export async function dropTemplateDatabases(adminUrl: string, run: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>(
      `select datname from pg_database where starts_with(datname, $1)`,
      [templatePrefix(run)],
    );
    for (const { datname } of rows) await client.query(`drop database if exists ${datname} with (force)`);
  } finally {
    await client.end();
  }
}

async function adminQuery(adminUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
