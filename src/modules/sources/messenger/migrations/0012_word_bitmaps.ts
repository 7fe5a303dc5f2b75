import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../../../../db/migration-helpers.ts';
import type { Database } from '../../../../db/schema.ts';
import { frequentWords } from '../../common/query/word-bitmaps.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// PostgreSQL: bitmaps of the messages holding each frequent word (common/query/word-bitmaps.ts,
// docs/architecture.md "Search", issue 24), so that a word in a large share of the messages is
// counted from them instead of from one word-index row per match. A bitmap row covers 8,192
// message ids in 1 KB, kept inline and uncompressed (storage plain): no TOAST read when it is
// counted, none written when a writer ORs its bits in. On a store with messages, the statistics
// of the word index name the frequent words, and their bitmaps are built from it here.
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  if (engine !== 'postgres') return;
  await sql`create table message_frequent_words (word_id integer primary key)`.execute(db);
  await sql`create table message_word_bits (
      word_id integer not null,
      block integer not null,
      bits bit varying not null,
      primary key (word_id, block)
    )`.execute(db);
  await sql`alter table message_word_bits alter column bits set storage plain`.execute(db);
  await sql`analyze message_words`.execute(db);
  await frequentWords(db as unknown as Kysely<Database>);
}
