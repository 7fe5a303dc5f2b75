import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// Every authenticated request on PostgreSQL without Redis reserves its rate-limit windows in
// rate_counters (dragnet_rate_reserve), an autocommit write. On an ordinary table its commit
// waits for the WAL flush; a transaction that wrote only unlogged tables writes no WAL of its
// own, so its commit returns without one. What that gives up, on purpose:
// - After a crash of PostgreSQL (not a clean restart) the table starts empty: the current
//   windows count from zero, so a tenant may get up to one more window's worth once.
// - Unlogged tables are not replicated: a standby cannot read them, and one promoted to primary
//   starts with empty counters (as after a crash). Only the API processes reserve, on the primary
//   (Store.db), never through the read replicas' pool.
// Nothing on SQLite: the embedded store batches its counters in memory (embedded-counters.ts).
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  if (engine === 'postgres') await sql`alter table rate_counters set unlogged`.execute(db);
}
