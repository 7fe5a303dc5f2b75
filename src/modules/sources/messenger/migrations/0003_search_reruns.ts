import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../../../../db/migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// A search no longer keeps its matches (docs/architecture.md "Search"): a history entry keeps
// the parsed query, its options and the message-id watermark, and a re-read or an export runs
// the query again below the watermark. Entries recorded before keep working the same way.
//
// SQLite: the FTS5 trigram index keeps positions again (detail=full; columnsize=0, as nothing
// ranks by length), so a term of three or more characters is a phrase of its trigrams that
// the index answers exactly: a broad query is counted from the index without reading a
// message. Measured at 1M messages: 7% more ingest CPU than detail=none, 861 MB of index
// against 222 MB (docs/performance.md, "Messenger search"). A narrow (id, channel_id) index
// gives the channel of each match without reading the message.
//
// Kysely runs SQLite migrations outside a transaction (no transactional DDL there), so every
// step may be run again after an interruption.
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  await db.schema.dropTable('search_history_results').ifExists().execute();
  const columns = await db.introspection
    .getTables()
    .then((tables) => tables.find((t) => t.name === 'search_history')?.columns ?? []);
  if (columns.some((column) => column.name === 'snapshot_count'))
    await db.schema.alterTable('search_history').dropColumn('snapshot_count').execute();
  if (engine !== 'sqlite') return;

  for (const trigger of ['messages_fts_delete', 'messages_fts_update']) {
    await sql`drop trigger if exists ${sql.ref(trigger)}`.execute(db);
  }
  await sql`drop table if exists messages_fts`.execute(db);
  await sql`create virtual table messages_fts using fts5(text_folded, content='messages', content_rowid='id', tokenize='trigram case_sensitive 1', detail=full, columnsize=0)`.execute(
    db,
  );
  await sql`insert into messages_fts (messages_fts, rank) values ('hashsize', 67108864)`.execute(db);
  await sql`insert into messages_fts (messages_fts, rank) values ('automerge', 8)`.execute(db);
  await sql`insert into messages_fts (messages_fts) values ('rebuild')`.execute(db);
  await sql`create trigger messages_fts_delete after delete on messages begin
    insert into messages_fts(messages_fts, rowid, text_folded) values ('delete', old.id, old.text_folded); end`.execute(
    db,
  );
  await sql`create trigger messages_fts_update after update of text_folded on messages begin
    insert into messages_fts(messages_fts, rowid, text_folded) values ('delete', old.id, old.text_folded);
    insert into messages_fts(rowid, text_folded) values (new.id, new.text_folded); end`.execute(db);
  await db.schema
    .createIndex('messages_id_channel_idx')
    .ifNotExists()
    .on('messages')
    .columns(['id', 'channel_id'])
    .execute();
}
