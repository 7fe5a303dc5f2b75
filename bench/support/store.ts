import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../../src/config.ts';
import { createContainer, type Container } from '../../src/container.ts';
import type { CleanupScope } from './cleanup.ts';

export type StoreKind = 'sqlite' | 'postgres';

export const DEFAULT_POSTGRES_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

export interface BenchStore {
  kind: StoreKind;
  dataDir: string;
  /** Where the store lives, for the report (no credentials). */
  location: string;
  /** DRAGNET_* variables that point a Dragnet process at this store. */
  env: Record<string, string>;
}

/**
 * A fresh store for one benchmark run, in the manner of test/support/test-store.ts: a temp data
 * dir (the embedded store lives there) and, for PostgreSQL, a new database
 * dragnet_bench_<random> on the admin URL's server. Both are removed when `scope` closes.
 */
export async function createBenchStore(
  kind: StoreKind,
  scope: CleanupScope,
  adminUrl = DEFAULT_POSTGRES_ADMIN_URL,
): Promise<BenchStore> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'dragnet-bench-'));
  scope.defer(`remove ${dataDir}`, () => rmSync(dataDir, { recursive: true, force: true }));
  const env: Record<string, string> = {
    DRAGNET_DATA_DIR: dataDir,
    // Random per run: nothing persists, and no key file is written.
    DRAGNET_SECRET_KEY: randomBytes(32).toString('hex'),
  };
  if (kind === 'sqlite') return { kind, dataDir, location: path.join(dataDir, 'dragnet.sqlite'), env };

  const name = `dragnet_bench_${randomBytes(6).toString('hex')}`;
  const server = new URL(adminUrl).host;
  try {
    await adminQuery(adminUrl, `create database ${name}`);
  } catch (error) {
    throw new Error(
      `cannot create database ${name} on PostgreSQL at ${server}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  scope.defer(`drop database ${name}`, () => adminQuery(adminUrl, `drop database if exists ${name} with (force)`));
  return postgresBenchStore(kind, dataDir, env, adminUrl, name);
}

/**
 * A store that outlives the run, in `dir/<kind>` (and, for PostgreSQL, the database
 * dragnet_bench_keep_<hash of dir>), so a later run can measure it again without building it:
 * `fresh` empties it first. Its secret key is the data dir's own key file.
 */
export async function keptBenchStore(
  kind: StoreKind,
  dir: string,
  options: { fresh: boolean; adminUrl?: string },
): Promise<BenchStore> {
  const dataDir = path.resolve(dir, kind);
  if (options.fresh) rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const env: Record<string, string> = { DRAGNET_DATA_DIR: dataDir };
  if (kind === 'sqlite') return { kind, dataDir, location: path.join(dataDir, 'dragnet.sqlite'), env };

  const adminUrl = options.adminUrl ?? DEFAULT_POSTGRES_ADMIN_URL;
  const name = `dragnet_bench_keep_${createHash('sha256').update(dataDir).digest('hex').slice(0, 12)}`;
  if (options.fresh) {
    await adminQuery(adminUrl, `drop database if exists ${name} with (force)`);
    await adminQuery(adminUrl, `create database ${name}`);
  }
  return postgresBenchStore(kind, dataDir, env, adminUrl, name);
}

/** The bench store of database `name` on the server of `adminUrl`. */
function postgresBenchStore(
  kind: StoreKind,
  dataDir: string,
  env: Record<string, string>,
  adminUrl: string,
  name: string,
): BenchStore {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    kind,
    dataDir,
    location: `postgres://${url.host}/${name}`,
    env: { ...env, DRAGNET_DATABASE_URL: url.toString() },
  };
}

async function adminQuery(adminUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** A fresh store and a container on it (closed with the scope), as the in-process benchmarks use. */
export async function createBenchContainer(
  kind: StoreKind,
  scope: CleanupScope,
): Promise<{ store: BenchStore; container: Container }> {
  const store = await createBenchStore(kind, scope);
  const container = await createContainer(loadConfig({ ...store.env, DRAGNET_LOG_LEVEL: 'warn' }));
  scope.defer('close container', () => container.close());
  return { store, container };
}
