import { execFile } from 'node:child_process';
import {
  copyFileSync,
  createWriteStream,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import * as tar from 'tar';
import { keyId, type KeyRing } from '../lib/crypto.ts';
import { AppError } from '../lib/errors.ts';
import { createBackupEncrypter, decryptBackup, type BackupKey } from './backup-encryption.ts';
import { migrateToLatest } from './migrate.ts';
import type { MigrationModule } from './migration-helpers.ts';
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
 * card-hash.key stays out on purpose: with it, the stored BIN and last four of a card leave few
 * enough candidates to confirm the full number against its digest (docs/operations.md).
 */
const DATA_FILES = ['secret.key', 'collectors.json', 'raw-leaks'];
/** The top-level names an archive may hold: a restore refuses any other entry. */
const ARCHIVE_NAMES = new Set([MANIFEST, ...SQLITE_FILES, POSTGRES_DUMP, ...DATA_FILES]);
/** Plain files and folders: links, devices and FIFOs in a backup are refused. */
const ENTRY_TYPES = new Set(['File', 'OldFile', 'ContiguousFile', 'Directory']);

interface Manifest {
  format: typeof FORMAT;
  version: 1;
  engine: Engine;
  created_at: string;
  files: string[];
  /** keyId of the card hash key the store's card digests were made with (absent before 0002). */
  card_key_id?: string;
}

export interface BackupLocation {
  dataDir: string;
  databaseUrl?: string;
  cardHashKey: Buffer;
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
    if (code === 'ENOENT')
      throw new AppError(
        'service_unavailable',
        `${tool} is not installed: install the PostgreSQL client tools of the server's major version`,
      );
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
 * `dragnet backup <file>`: one tar archive of the store and the data files a restore needs,
 * encrypted with age as it is written (never a plaintext copy on disk but the staging folder
 * inside the data folder). SQLite: both database files through SQLite's online backup,
 * consistent while the server keeps writing. PostgreSQL: pg_dump in its custom format
 * (compressed, and what pg_restore reads). The archive is written, owner-only, beside its final
 * name and renamed when complete, so a backup that failed half-way never looks like a backup.
 */
export async function backupStore(
  location: BackupLocation,
  file: string,
  key: BackupKey,
): Promise<Manifest & { bytes: number }> {
  const engine: Engine = location.databaseUrl ? 'postgres' : 'sqlite';
  const encrypt = await createBackupEncrypter(key);
  mkdirSync(location.dataDir, { recursive: true });
  const staging = mkdtempSync(path.join(location.dataDir, '.backup-'));
  const partial = `${file}.partial`;
  try {
    const files: string[] = [];
    if (location.databaseUrl) {
      await postgresTool(
        'pg_dump',
        ['--format=custom', `--file=${path.join(staging, POSTGRES_DUMP)}`],
        location.databaseUrl,
      );
      files.push(POSTGRES_DUMP);
    } else {
      const storeFile = path.join(location.dataDir, 'dragnet.sqlite');
      if (!existsSync(storeFile)) throw new AppError('not_found', `no store at ${storeFile}: nothing to back up`);
      for (const [name, source] of [
        ['dragnet.sqlite', storeFile],
        ['search-history.sqlite', searchHistoryFile(storeFile)],
      ] as const) {
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
    const manifest: Manifest = {
      format: FORMAT,
      version: 1,
      engine,
      created_at: new Date().toISOString(),
      files,
      card_key_id: keyId(location.cardHashKey),
    };
    writeFileSync(path.join(staging, MANIFEST), JSON.stringify(manifest, null, 2) + '\n');
    mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    rmSync(partial, { force: true });
    const archive = tar.create({ cwd: staging, portable: true }, [MANIFEST, ...files]);
    await pipeline(await encrypt(Readable.from(archive)), createWriteStream(partial, { mode: 0o600, flags: 'wx' }));
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
      ? (
          await sql<{
            name: string;
          }>`select name from pragma_table_list where schema = 'main' and type = 'table'`.execute(store.db)
        ).rows.map((r) => r.name)
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
  if (manifest.format !== FORMAT || manifest.version !== 1)
    throw new AppError('validation_failed', `${file} is not a dragnet backup of a version this dragnet reads`);
  return manifest;
}

/** Why an archive entry is refused, or null: only the plain files and folders a backup writes are restored. */
function refusal(entry: tar.ReadEntry): string | null {
  const name = entry.path;
  if (path.posix.isAbsolute(name) || path.win32.isAbsolute(name)) return 'an absolute path';
  if (name.split(/[\\/]/).includes('..')) return "a path with '..'";
  if (!ENTRY_TYPES.has(entry.type)) return `a ${entry.type} entry (only plain files and folders are restored)`;
  if (!ARCHIVE_NAMES.has(name.split('/')[0]!)) return 'not a file a dragnet backup holds';
  return null;
}

/**
 * Unpacks the decrypted archive into `staging`. The first entry that is a link, a device, an
 * absolute path or a path out of the folder (`..`) stops the restore, named in the error:
 * a backup never holds one, so its presence means a damaged or hostile archive.
 */
async function extractArchive(archive: Readable, staging: string, file: string): Promise<void> {
  let refused: AppError | null = null;
  const unpack = tar.extract({
    cwd: staging,
    strict: true,
    filter: (_path, entry) => {
      const reason = refused ? null : refusal(entry as tar.ReadEntry);
      if (reason) {
        refused = new AppError(
          'validation_failed',
          `${file} holds a refused entry "${(entry as tar.ReadEntry).path}": ${reason}`,
        );
        unpack.abort(refused);
      }
      return !refused;
    },
  });
  try {
    await pipeline(archive, unpack);
  } catch (error) {
    if (refused) throw refused;
    throw new AppError('validation_failed', `${file} is not a readable backup archive: ${(error as Error).message}`);
  }
}

/**
 * `dragnet restore <file> [--force]`: the store and data files of a backup, into the configured
 * store (a fresh data folder, or a fresh PostgreSQL database). A store that holds any data is
 * refused unless `force`; then its contents are replaced whole. Stop every Dragnet process of
 * the store first. The restored store is migrated to this version (with `sourceMigrations`, the
 * sources' tables), with the keys `keys` reads once the backup's secret.key is in place.
 */
export async function restoreStore(
  location: BackupLocation,
  file: string,
  options: { force: boolean; key: BackupKey; keys: () => KeyRing; sourceMigrations: Record<string, MigrationModule> },
): Promise<{ engine: Engine; files: string[]; applied: string[]; card_key: 'same' | 'different' | 'unknown' }> {
  if (!existsSync(file)) throw new AppError('not_found', `no backup at ${file}`);
  const engine: Engine = location.databaseUrl ? 'postgres' : 'sqlite';
  // Decrypted before the staging folder exists: a wrong passphrase leaves nothing behind.
  const archive = await decryptBackup(options.key, file);
  mkdirSync(location.dataDir, { recursive: true });
  const staging = mkdtempSync(path.join(location.dataDir, '.restore-'));
  try {
    await extractArchive(archive, staging, file);
    const manifest = readManifest(staging, file);
    if (manifest.engine !== engine) {
      throw new AppError(
        'validation_failed',
        `${file} is a backup of the ${manifest.engine} store, but this dragnet is configured for ${engine} (DRAGNET_DATABASE_URL ${location.databaseUrl ? 'is' : 'is not'} set)`,
      );
    }

    const existing = openStore(location);
    try {
      if (!options.force && (await storeHasData(existing))) {
        throw new AppError(
          'conflict',
          `the ${engine} store at ${existing.location} already holds data: restore into a fresh one, or pass --force to replace it`,
        );
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
      await postgresTool(
        'pg_restore',
        ['--no-owner', '--no-privileges', '--single-transaction', '--exit-on-error', path.join(staging, POSTGRES_DUMP)],
        location.databaseUrl!,
      );
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
      const cardKey =
        manifest.card_key_id === undefined
          ? 'unknown'
          : manifest.card_key_id === keyId(location.cardHashKey)
            ? 'same'
            : 'different';
      return {
        engine,
        files: manifest.files,
        applied: await migrateToLatest(restored, { keys: options.keys(), sourceMigrations: options.sourceMigrations }),
        card_key: cardKey,
      };
    } finally {
      await restored.close();
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}
