import { setTimeout as sleep } from 'node:timers/promises';
import { SqliteDatabase } from './sqlite-native.ts';
import { Migrator, type Migration, type MigrationProvider } from 'kysely';
import type { KeyRing } from '../lib/crypto.ts';
import type { Store } from './store.ts';
import type { MigrationModule } from './migration-helpers.ts';
import * as m0001 from './migrations/0001_trunk.ts';
import * as m0003 from './migrations/0003_rate_limits.ts';
import * as m0004 from './migrations/0004_delivery.ts';
import * as m0005 from './migrations/0005_rules.ts';
import * as m0007 from './migrations/0007_match_progress.ts';
import * as m0008 from './migrations/0008_collector_state.ts';
import * as m0009 from './migrations/0009_change_notifications.ts';
import * as m0010 from './migrations/0010_audit_log.ts';
import * as m0011 from './migrations/0011_system_sender_unique.ts';
import * as m0012 from './migrations/0012_worker_claims.ts';
import * as m0013 from './migrations/0013_sealed_webhook_headers.ts';
import * as m0018 from './migrations/0018_known_login_addresses.ts';
import * as m0019 from './migrations/0019_incidents.ts';
import * as m0019b from './migrations/0019_rule_pause.ts';
import * as m0019c from './migrations/0019_server_settings.ts';
import * as m0020a from './migrations/0020_rule_tlp.ts';
import * as m0020b from './migrations/0020_api_keys.ts';
import * as m0020t from './migrations/0020_taxii_indexes.ts';
import * as m0020siem from './migrations/0020_siem_targets.ts';
import * as m0021 from './migrations/0021_unlogged_rate_counters.ts';
import * as m0022 from './migrations/0022_running_rule_runs.ts';

// Listed explicitly (not read from disk) so the set is the same under tsx, a bundle or tests.
// Each source brings the migrations of its own tables (src/modules/sources/<name>/migrations),
// which the caller hands in: db/ is below the modules and names none of them.
const coreMigrations: Record<string, MigrationModule> = {
  '0001_trunk': m0001,
  '0003_rate_limits': m0003,
  '0004_delivery': m0004,
  '0005_rules': m0005,
  '0007_match_progress': m0007,
  '0008_collector_state': m0008,
  '0009_change_notifications': m0009,
  '0010_audit_log': m0010,
  '0011_system_sender_unique': m0011,
  '0012_worker_claims': m0012,
  '0013_sealed_webhook_headers': m0013,
  '0018_known_login_addresses': m0018,
  '0019_incidents': m0019,
  '0019_rule_pause': m0019b,
  '0019_server_settings': m0019c,
  '0020_rule_tlp': m0020a,
  '0020_api_keys': m0020b,
  '0020_taxii_indexes': m0020t,
  '0020_siem_targets': m0020siem,
  '0021_unlogged_rate_counters': m0021,
  '0022_running_rule_runs': m0022,
};

/** How often a process waiting for another's migrations on SQLite tries the lock again. */
const SQLITE_LOCK_RETRY_MS = 50;

/**
 * Holds an exclusive lock on `file` (an empty SQLite database beside the store) while `work`
 * runs. SQLite's own file locks make it a mutex between processes on one host that the
 * operating system releases when its holder dies, even by kill -9. Waits without blocking the
 * event loop (no busy_timeout, which would sleep inside the call).
 */
async function withSqliteFileLock<T>(file: string, work: () => Promise<T>): Promise<T> {
  const lock = new SqliteDatabase(file);
  try {
    lock.pragma('busy_timeout = 0');
    for (;;) {
      try {
        lock.exec('begin exclusive');
        break;
      } catch (error) {
        if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw error;
        await sleep(SQLITE_LOCK_RETRY_MS);
      }
    }
    return await work();
  } finally {
    if (lock.inTransaction) lock.exec('rollback');
    lock.close();
  }
}

/**
 * Applies pending migrations; returns their names. Several processes may start at once on a
 * new store or a new version: one applies the migrations and the others wait for it, then find
 * nothing left to do. On PostgreSQL Kysely's Migrator does that itself: it holds a session-level
 * advisory lock (pg_advisory_lock) while it reads the applied migrations and runs the pending
 * ones, all in one transaction. On SQLite it takes no lock and runs each migration outside a
 * transaction, so processes take turns through a lock file. `keys` is the master key's ring
 * (migrations that seal stored values call it); `sourceMigrations` are the sources' own tables
 * (the sources module's sourceMigrations()), applied with the core ones.
 */
export async function migrateToLatest(
  store: Store,
  options: { keys: KeyRing; sourceMigrations: Record<string, MigrationModule> },
): Promise<string[]> {
  const migrate = () => runMigrations(store, options);
  return store.engine === 'sqlite' ? withSqliteFileLock(`${store.location}.migrate-lock`, migrate) : migrate();
}

async function runMigrations(
  store: Store,
  { keys, sourceMigrations }: { keys: KeyRing; sourceMigrations: Record<string, MigrationModule> },
): Promise<string[]> {
  const migrations = { ...coreMigrations, ...sourceMigrations };
  const provider: MigrationProvider = {
    getMigrations: async () =>
      Object.fromEntries(
        Object.entries(migrations).map(([name, module]): [string, Migration] => [
          name,
          { up: (db) => module.up(db, { engine: store.engine, keys }) },
        ]),
      ),
  };
  const migrator = new Migrator({ db: store.db, provider, allowUnorderedMigrations: true });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`migration ${failed?.migrationName ?? '?'} failed: ${String(error)}`, { cause: error });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
