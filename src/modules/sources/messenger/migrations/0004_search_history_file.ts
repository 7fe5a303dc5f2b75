import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../../../../db/migration-helpers.ts';
import { searchHistoryFile } from '../../../../db/store.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// SQLite: the search history moves to a database file of its own (search-history.sqlite beside
// dragnet.sqlite), written through a connection of its own. SQLite has one writer per file,
// an ingest holds the store's for a whole source file, and every search records a history row:
// searches waited for ingests (docs/architecture.md, "Search"). Its foreign keys to
// organizations and users cannot cross files; neither is ever deleted.
//
// Kysely runs SQLite migrations outside a transaction, so every step may be run again after
// an interruption. PostgreSQL locks rows, not the database: the table stays.
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  if (engine !== 'sqlite') return;
  const { rows } = await sql<{ name: string; file: string }>`pragma database_list`.execute(db);
  const main = rows.find((row) => row.name === 'main')!;
  await sql`attach database ${searchHistoryFile(main.file)} as search_log`.execute(db);
  try {
    await sql`pragma search_log.journal_mode = WAL`.execute(db);
    await sql`create table if not exists search_log.search_history (
      id integer primary key autoincrement,
      org_id integer not null,
      user_id integer,
      query text not null,
      parsed_query text not null,
      options text not null,
      total_matches integer not null,
      channels_matched integer not null,
      watermark_message_id integer not null,
      searched_at integer not null)`.execute(db);
    await sql`create index if not exists search_log.search_history_org_idx on search_history (org_id, searched_at)`.execute(
      db,
    );
    const { rows: old } =
      await sql`select 1 from main.sqlite_master where type = 'table' and name = 'search_history'`.execute(db);
    if (old.length > 0) {
      await sql`insert or ignore into search_log.search_history
        (id, org_id, user_id, query, parsed_query, options, total_matches, channels_matched, watermark_message_id, searched_at)
        select id, org_id, user_id, query, parsed_query, options, total_matches, channels_matched, watermark_message_id, searched_at
        from main.search_history`.execute(db);
      await sql`drop table main.search_history`.execute(db);
    }
  } finally {
    await sql`detach database search_log`.execute(db);
  }
}
