import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../../../../db/migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// SQLite: the FTS5 trigram index is made again, cheaper to build and to read
// (docs/performance.md, "Messenger search"):
// - detail=none: the index keeps which messages hold a trigram, not where. Search asks it for
//   single trigrams and checks the whole term itself (message-search.sql.ts), so positions
//   were never read; without them the index is a fraction of the size.
// - New messages reach it from the corpus writer, one INSERT … SELECT per write, instead of a
//   trigger per row: FTS5 writes out its pending terms at every statement, so the trigger made
//   a small segment, and merge work, for every 500-row INSERT. Deletes and edits keep triggers.
// - The pending-terms hash may grow to 64 MB (default 1 MB) before a segment is written, and
//   segments of one size are merged once there are 8 of them (default 4): fewer, larger
//   segments and half the merge work while loading, at most 8 segments per size to visit.
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  if (engine !== 'sqlite') return;
  for (const trigger of ['messages_fts_insert', 'messages_fts_delete', 'messages_fts_update']) {
    await sql`drop trigger ${sql.ref(trigger)}`.execute(db);
  }
  await sql`drop table messages_fts`.execute(db);
  await sql`create virtual table messages_fts using fts5(text_folded, content='messages', content_rowid='id', tokenize='trigram case_sensitive 1', detail=none)`.execute(
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
}
