import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../../../../db/migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// SQLite: the channel index carries each message's folded text, so a channel filter reads its
// channels' entries one after the other instead of one table page per message. The channels'
// messages are spread over the whole table (channels write side by side): counting `password`
// over 5 channels of 2,000 messages at 1M read 10,000 table pages, more than a search reader's
// page cache holds, 9–16 ms against 7 ms from this index (docs/performance.md, "The SQLite
// channel index with the folded text"). It replaces the (channel_id, date) index, whose order
// it keeps (id after the date, as the walks order their rows): a page walk checks its rows from
// the index too, and reads only the matches from the table. PostgreSQL counts a channel filter
// from the channels' bitmaps (migration messenger/0013).
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  if (engine !== 'sqlite') return;
  await sql`create index messages_channel_text_idx on messages (channel_id, date, id, text_folded)`.execute(db);
  await sql`drop index messages_channel_date_idx`.execute(db);
}
