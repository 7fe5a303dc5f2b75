import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../../../../db/migration-helpers.ts';
import type { Database } from '../../../../db/schema.ts';
import { createWordIndexWriter } from '../../common/query/word-index.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// PostgreSQL: the word index of messages (common/query/word-index.ts, docs/architecture.md
// "Search"). `message_lexicon` gives every distinct word of the folded texts an id and has its
// own trigram index, which finds the words containing a term; `message_words` keeps each
// message's word ids, sorted, under an intarray GIN index that answers a query of such terms
// exactly, so that a broad count reads a narrow row per match instead of checking every text.
// SQLite has its positional FTS5 index instead (migration 0003) and is left as it is.
//
// The messages already stored are indexed here, in id order and chunks, with the same code the
// writer uses: a few minutes per million messages (docs/operations.md, "Upgrading").
const BACKFILL_CHUNK = 20_000;

export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  if (engine !== 'postgres') return;
  await sql`create extension if not exists intarray`.execute(db);
  await sql`create table message_lexicon (
      id serial primary key,
      word text not null,
      constraint message_lexicon_word_unique unique (word)
    )`.execute(db);
  await sql`create index message_lexicon_word_trgm_idx on message_lexicon using gin (word gin_trgm_ops)`.execute(db);
  await sql`create table message_words (
      id bigint primary key,
      channel_id bigint not null,
      word_ids int[] not null
    )`.execute(db);

  const typed = db as unknown as Kysely<Database>;
  const writer = createWordIndexWriter();
  const { rows } = await sql<{ max: string | null }>`select max(id) as max from messages`.execute(db);
  const last = Number(rows[0]?.max ?? 0);
  for (let above = 0; above < last; above += BACKFILL_CHUNK)
    (await writer.index(typed, above, above + BACKFILL_CHUNK)).commit();

  // Built after the backfill: one index build is far cheaper than as many inserts.
  await sql`create index message_words_ids_idx on message_words using gin (word_ids gin__int_ops)`.execute(db);
  await sql`create index message_words_channel_idx on message_words (channel_id, id)`.execute(db);
  await sql`analyze message_words`.execute(db);
  await sql`analyze message_lexicon`.execute(db);
}
