import { sql, type Kysely } from 'kysely';

// Landed migrations are never edited: add a new numbered file instead.
//
// "Open in context" reads the posts around a hit in its conversation: a Discord channel
// (`channel_id` of the stored fields) or a forum thread (`thread_id`). These indexes hold the
// conversation and the row id, so the few posts before and after a hit are read in id order
// (the order an export or a scrape stored them) however long the conversation is. Paste sites
// have no conversation; their documents have neither field and take no space in these indexes'
// lookups beyond a null entry.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const field of ['channel_id', 'thread_id']) {
    await sql`create index ${sql.ref(`documents_${field}_idx`)} on documents (source, (fields ->> ${sql.lit(field)}), id)`.execute(
      db,
    );
  }
}
