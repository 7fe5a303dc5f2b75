import { Migrator, type Migration, type MigrationProvider } from 'kysely';
import type { Store } from './store.ts';
import type { MigrationModule } from './migration-helpers.ts';
import { sourceMigrations } from '../modules/sources/index.ts';
import * as m0001 from './migrations/0001_trunk.ts';
import * as m0003 from './migrations/0003_rate_limits.ts';
import * as m0004 from './migrations/0004_delivery.ts';
import * as m0005 from './migrations/0005_rules.ts';
import * as m0007 from './migrations/0007_match_progress.ts';
import * as m0008 from './migrations/0008_collector_state.ts';
import * as m0009 from './migrations/0009_change_notifications.ts';
import * as m0010 from './migrations/0010_audit_log.ts';

// Listed explicitly (not read from disk) so the set is the same under tsx, a bundle or tests.
// Each source brings the migrations of its own tables (src/modules/sources/<name>/migrations).
const coreMigrations: Record<string, MigrationModule> = {
  '0001_trunk': m0001,
  '0003_rate_limits': m0003,
  '0004_delivery': m0004,
  '0005_rules': m0005,
  '0007_match_progress': m0007,
  '0008_collector_state': m0008,
  '0009_change_notifications': m0009,
  '0010_audit_log': m0010,
};

export async function migrateToLatest(store: Store): Promise<string[]> {
  const migrations = { ...coreMigrations, ...sourceMigrations() };
  const provider: MigrationProvider = {
    getMigrations: async () =>
      Object.fromEntries(
        Object.entries(migrations).map(([name, module]): [string, Migration] => [
          name,
          { up: (db) => module.up(db, { engine: store.engine }) },
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
