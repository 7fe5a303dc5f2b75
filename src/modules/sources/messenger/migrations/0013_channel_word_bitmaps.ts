import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../../../../db/migration-helpers.ts';
import type { Database } from '../../../../db/schema.ts';
import { frequentWords } from '../../common/query/word-bitmaps.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// PostgreSQL: each frequent word's bitmap per channel, one bit per position of a message in its
// channel (common/query/word-bitmaps.ts, docs/architecture.md "Search", issue 24), so that a
// channel filter counts its channels' bits: through the word index it read every match of its
// channels, 3,900 rows for `password` over 5 channels at 1M messages. message_channel_sizes is
// each channel's number of messages, which a search reads with its watermark. Both are built
// here from the word index: the frequent words are forgotten and given their bitmaps again,
// the message-id ones and the per-channel ones in one pass.
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  if (engine !== 'postgres') return;
  await sql`create table message_channel_sizes (
      channel_id bigint primary key,
      messages integer not null
    )`.execute(db);
  await sql`create table message_channel_word_bits (
      channel_id bigint not null,
      word_id integer not null,
      block integer not null,
      bits bit varying not null,
      primary key (channel_id, word_id, block)
    )`.execute(db);
  await sql`alter table message_channel_word_bits alter column bits set storage plain`.execute(db);
  await sql`insert into message_channel_sizes (channel_id, messages)
      select channel_id, count(*) from message_words group by channel_id`.execute(db);
  await sql`truncate message_frequent_words, message_word_bits`.execute(db);
  await frequentWords(db as unknown as Kysely<Database>);
}
