import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../../../../db/migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// PostgreSQL with read replicas (DRAGNET_DATABASE_READ_URLS, src/db/read-replicas.ts): a search
// records the WAL position its watermark was read at (pg_lsn as text, null when no replica is
// configured), so that its re-reads and exports run only on a replica that has replayed past
// it and see the rows it counted. SQLite has no replicas: its search history is unchanged.
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  if (engine !== 'postgres') return;
  await sql`alter table search_history add column if not exists read_lsn text`.execute(db);
}
