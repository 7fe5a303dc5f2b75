import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import * as tar from 'tar';
import type { KeyRing } from '../lib/crypto.ts';
import { AppError } from '../lib/errors.ts';
import { migrateToLatest } from './migrate.ts';
import { SqliteDatabase } from './sqlite-native.ts';
import { openStore, searchHistoryFile, type Engine, type Store } from './store.ts';

const run = promisify(execFile);

const MANIFEST = 'manifest.json';
const FORMAT = 'dragnet-backup';
const SQLITE_FILES = ['dragnet.sqlite', 'search-history.sqlite'];
const POSTGRES_DUMP = 'postgres.dump';
/**
 * Files of the data folder a restore needs besides the store: the key that seals SMTP
 * passwords, webhook secrets and TOTP seeds (when it is not DRAGNET_SECRET_KEY), the collectors
 * file, and the raw leak files raw_leak_extended scans. Inbox, incoming and tmp are transient.
 */
const DATA_FILES = ['secret.key', 'collectors.json', 'raw-leaks'];

interface Manifest {
  format: typeof FORMAT;
  version: 1;
  engine: Engine;
  created_at: string;
  files: string[];
}

export interface BackupLocation {
  dataDir: string;
  databaseUrl?: string;
}

/**
 * A libpq URL without its password, and the password for PGPASSWORD: a password on the command
 * line would be visible to every user of the host in the process list.
 */
function postgresConnection(databaseUrl: string) {
  const url = new URL(databaseUrl);
  const password = decodeURIComponent(url.password);
  url.password = '';
  return { url: url.toString(), env: { ...process.env, ...(password ? { PGPASSWORD: password } : {}) } };
}

async function postgresTool(tool: 'pg_dump' | 'pg_restore', args: string[], databaseUrl: string): Promise<void> {
  const { url, env } = postgresConnection(databaseUrl);
  try {
    await run(tool, [...args, `--dbname=${url}`], { env, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const { code, stderr } = error as NodeJS.ErrnoException & { stderr?: string };
    if (code === 'ENOENT') throw new AppError('service_unavailable', `${tool} is not installed: install the PostgreSQL client tools of the server's major version`);
    throw new AppError('service_unavailable', `${tool} failed: ${(stderr ?? String(error)).trim()}`);
  }
}

/** Puts a data-folder entry into the staging folder: hard links (the data folder's file system, so raw leak files cost no copy), else copies. */
function stageDataFile(from: string, to: string) {
  if (statSync(from).isDirectory()) {
    mkdirSync(to, { recursive: true });
    for (const name of readdirSync(from)) stageDataFile(path.join(from, name), path.join(to, name));
    return;
  }
  try {
    linkSync(from, to);
  } catch {
    copyFileSync(from, to);
  }
}

/**
 * `dragnet backup <file>`: one tar archive of the store and the data files a restore needs.
 * SQLite: both database files through SQLite's online backup, consistent while the server
 * keeps writing. PostgreSQL: pg_dump in its custom format (compressed, and what pg_restore
 * reads). The archive is written beside its final name and renamed when complete, so a
 * backup that failed half-way never looks like a backup.
 */
export async function backupStore(location: BackupLocation, file: string): Promise<Manifest & { bytes: number }> {
  const engine: Engine = location.databaseUrl ? 'postgres' : 'sqlite';
  mkdirSync(location.dataDir, { recursive: true });
  const staging = mkdtempSync(path.join(location.dataDir, '.backup-'));
  const partial = `${file}.partial`;
  try {
    const files: string[] = [];
    if (location.databaseUrl) {
      await postgresTool('pg_dump', ['--format=custom', `--file=${path.join(staging, POSTGRES_DUMP)}`], location.databaseUrl);
      files.push(POSTGRES_DUMP);
    } else {
      const storeFile = path.join(location.dataDir, 'dragnet.sqlite');
      if (!existsSync(storeFile)) throw new AppError('not_found', `no store at ${storeFile}: nothing to back up`);
      for (const [name, source] of [['dragnet.sqlite', storeFile], ['search-history.sqlite', searchHistoryFile(storeFile)]] as const) {
        if (!existsSync(source)) continue;
        const connection = new SqliteDatabase(source, { readonly: true, fileMustExist: true });
        try {
          // After the first step, the rest in one step: SQLite restarts a backup whose source
          // another connection wrote to between steps, and the server commits all the time. One
          // step reads one snapshot of the WAL and never blocks the server's writes.
          await connection.backup(path.join(staging, name), { progress: ({ totalPages }) => Math.max(totalPages, 1) });
        } finally {
          connection.close();
        }
        files.push(name);
      }
    }
    for (const name of DATA_FILES) {
      const source = path.join(location.dataDir, name);
      if (!existsSync(source)) continue;
      stageDataFile(source, path.join(staging, name));
      files.push(name);
    }
    const manifest: Manifest = { format: FORMAT, version: 1, engine, created_at: new Date().toISOString(), files };
    writeFileSync(path.join(staging, MANIFEST), JSON.stringify(manifest, null, 2) + '\n');
    mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    await tar.create({ file: partial, cwd: staging, portable: true }, [MANIFEST, ...files]);
    renameSync(partial, file);
    return { ...manifest, bytes: statSync(file).size };
  } finally {
    rmSync(partial, { force: true });
    rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * Whether any table holds a row: a fresh store has none but the migrator's bookkeeping and, on
 * SQLite, the full-text index's shadow tables (left out through table_list's types).
 */
async function storeHasData(store: Store): Promise<boolean> {
  const names =
    store.engine === 'sqlite'
      ? (await sql<{ name: string }>`select name from pragma_table_list where schema = 'main' and type = 'table'`.execute(store.db)).rows.map((r) => r.name)
      : (await store.db.introspection.getTables()).filter((table) => !table.isView).map((table) => table.name);
  for (const name of names) {
    if (name.startsWith('kysely_') || name.startsWith('sqlite_')) continue;
    const found = await sql`select 1 from ${sql.table(name)} limit 1`.execute(store.db);
    if (found.rows.length > 0) return true;
  }
  return false;
}

function readManifest(staging: string, file: string): Manifest {
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(path.join(staging, MANIFEST), 'utf8')) as Manifest;
  } catch {
    throw new AppError('validation_failed', `${file} is not a dragnet backup (no ${MANIFEST})`);
  }
  if (manifest.format !== FORMAT || manifest.version !== 1) throw new AppError('validation_failed', `${file} is not a dragnet backup of a version this dragnet reads`);
  return manifest;
}

/**
 * `dragnet restore <file> [--force]`: the store and data files of a backup, into the configured
 * store (a fresh data folder, or a fresh PostgreSQL database). A store that holds any data is
 * refused unless `force`; then its contents are replaced whole. Stop every Dragnet process of
 * the store first. The restored store is migrated to this version.
 */
export async function restoreStore(location: BackupLocation, file: string, options: { force: boolean; keys: () => KeyRing }): Promise<{ engine: Engine; files: string[]; applied: string[] }> {
  if (!existsSync(file)) throw new AppError('not_found', `no backup at ${file}`);
  const engine: Engine = location.databaseUrl ? 'postgres' : 'sqlite';
  mkdirSync(location.dataDir, { recursive: true });
  const staging = mkdtempSync(path.join(location.dataDir, '.restore-'));
  try {
    try {
      await tar.extract({ file, cwd: staging, strict: true });
    } catch (error) {
      throw new AppError('validation_failed', `${file} is not a readable backup archive: ${(error as Error).message}`);
    }
    const manifest = readManifest(staging, file);
    if (manifest.engine !== engine) {
      throw new AppError('validation_failed', `${file} is a backup of the ${manifest.engine} store, but this dragnet is configured for ${engine} (DRAGNET_DATABASE_URL ${location.databaseUrl ? 'is' : 'is not'} set)`);
    }

    const existing = openStore(location);
    try {
      if (!options.force && (await storeHasData(existing))) {
        throw new AppError('conflict', `the ${engine} store at ${existing.location} already holds data: restore into a fresh one, or pass --force to replace it`);
      }
      if (engine === 'postgres') {
        // Objects a newer migration made would survive pg_restore --clean; a fresh schema does not.
        await sql`drop schema public cascade`.execute(existing.db);
        await sql`create schema public`.execute(existing.db);
      }
    } finally {
      await existing.close();
    }

    if (engine === 'postgres') {
      // One transaction: a dump that fails part-way leaves the (now empty) database as it was.
      await postgresTool('pg_restore', ['--no-owner', '--no-privileges', '--single-transaction', '--exit-on-error', path.join(staging, POSTGRES_DUMP)], location.databaseUrl!);
    } else {
      for (const name of SQLITE_FILES) {
        const target = path.join(location.dataDir, name);
        for (const suffix of ['', '-wal', '-shm']) rmSync(target + suffix, { force: true });
        if (manifest.files.includes(name)) renameSync(path.join(staging, name), target);
      }
    }
    for (const name of DATA_FILES) {
      if (!manifest.files.includes(name)) continue;
      const target = path.join(location.dataDir, name);
      rmSync(target, { recursive: true, force: true });
      renameSync(path.join(staging, name), target);
    }

    const restored = openStore(location);
    try {
      return { engine, files: manifest.files, applied: await migrateToLatest(restored, options.keys) };
    } finally {
      await restored.close();
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}
