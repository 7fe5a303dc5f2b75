import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../../../../db/migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// PostgreSQL: the word index's GIN index takes the channel as its first column (btree_gin, from
// PostgreSQL's contrib like intarray), so that one index scan answers "in these channels and with
// these words" exactly (docs/architecture.md "Search", issue 24). A channel filter's count read
// each of its channels' narrow rows and checked it (10,000 rows for 5 channels at 1M messages);
// now it reads only its matches. A GIN index is searched by each column's own keys, so a query
// on the words alone reads the word keys as the single-column index did, and it replaces that
// index: an ingest adds one more key a message (its channel) to about forty word keys. The index
// is built over the rows already stored.
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  if (engine !== 'postgres') return;
  await sql`create extension if not exists btree_gin`.execute(db);
  await sql`create index if not exists message_words_channel_words_idx on message_words
    using gin (channel_id, word_ids gin__int_ops)`.execute(db);
  await sql`drop index if exists message_words_ids_idx`.execute(db);
}
