import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// SQLite: new messages reach the FTS5 index from the corpus writer, one INSERT … SELECT per
// write, instead of a trigger per row. FTS5 flushes its pending terms at every statement, so
// the trigger wrote a small segment (and merged segments) for every 500-row INSERT: about
// three times slower ingest (docs/performance.md). Deletes and edits keep their triggers.
// The pending-terms hash may grow to 64 MB (default 1 MB) before FTS5 writes a segment, so a
// write of 50,000 messages becomes a few large segments instead of dozens of small ones that
// must then be merged: about 1.5× faster again. Segments of one size are merged once there
// are 8 of them (default 4): half the merge work while loading, at most 8 segments per size
// for a lookup to visit.
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  if (engine !== 'sqlite') return;
  await sql`drop trigger messages_fts_insert`.execute(db);
  await sql`insert into messages_fts (messages_fts, rank) values ('hashsize', 67108864)`.execute(db);
  await sql`insert into messages_fts (messages_fts, rank) values ('automerge', 8)`.execute(db);
}
