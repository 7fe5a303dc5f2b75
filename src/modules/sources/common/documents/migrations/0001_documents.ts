import { sql, type Kysely } from 'kysely';
import { createTableWithId, type MigrationContext } from '../../../../../db/migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// The text-document store of the chat-server, hacker-forum and paste-site sources: one row per
// record (a Discord message, a forum post, a paste), unique on (source, doc_key), the record's
// natural key within its source, so re-ingesting adds nothing.
// - text: what the query searches (message content and embeds, a post's title and body, a
//   paste's content); text_folded: the same folded by foldText, the exact substring check of
//   the query language (instr / strpos), as in the messenger's messages table.
// - fields: the record's hit fields as JSON (jsonb on PostgreSQL, so `fields ->> 'key'` reads
//   the same on both engines: the sources' filters are written that way).
// - discovered_at: when Dragnet first stored the record; rule windows apply to it.
// No trigram index: rule runs read the window of new documents, by (source, discovered_at).
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  await createTableWithId(db, engine, 'documents')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('doc_key', 'text', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('text_folded', 'text', (c) => c.notNull())
    .addColumn('fields', engine === 'postgres' ? sql`jsonb` : 'text', (c) => c.notNull())
    .addColumn('discovered_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('documents_source_key_unique', ['source', 'doc_key'])
    .execute();
  await db.schema
    .createIndex('documents_source_discovered_idx')
    .on('documents')
    .columns(['source', 'discovered_at'])
    .execute();
}
