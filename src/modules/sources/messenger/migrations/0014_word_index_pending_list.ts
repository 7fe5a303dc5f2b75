import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../../../../db/migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// PostgreSQL: the word index's GIN index takes a whole writer's transaction into its pending
// list, and the writer moves it into the index once, at the end of the transaction
// (ingest/corpus-writer.ts). At the default 4 MB limit a transaction of 10,000 generated
// messages (~12 MB of pending entries) was merged in three or four cleanups, each decoding and
// re-encoding the posting lists of the words it touched; the list's limit is now above what a
// transaction writes, so the writer's own cleanup is the only one. A search reads the pending
// list whole: it is empty between two writers' transactions instead of holding up to 4 MB.
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  if (engine !== 'postgres') return;
  await sql`alter index message_words_channel_words_idx set (gin_pending_list_limit = 65536)`.execute(db);
}
