import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../../../../db/migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// PostgreSQL: the messages with a word too long for the lexicon (their word ids hold LONG_WORDS,
// 0: word-index.ts) in a partial B-tree of their own, by channel and id. Every count from the
// word index or the bitmaps reads them to check their text, and the GIN index is a poor way to
// find a handful of rows: below a million messages the planner estimated a sequential scan of
// the whole word index cheaper, 65 ms of each broad search at 200,000 messages for no row
// (docs/performance.md). The index holds only those messages, so writers barely pay for it.
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  if (engine !== 'postgres') return;
  await sql`create index if not exists message_words_long_words_idx on message_words (channel_id, id)
    where word_ids @@ '0'::query_int`.execute(db);
}
