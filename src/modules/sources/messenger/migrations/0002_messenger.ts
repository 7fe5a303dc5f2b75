import { sql, type Kysely } from 'kysely';
import { createTableWithId, type MigrationContext } from '../../../../db/migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  await createTableWithId(db, engine, 'categories')
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await createTableWithId(db, engine, 'channels')
    // platform + identity key ("id:<platform id>", else "username:<handle>", else "title:<title>")
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('channel_key', 'text', (c) => c.notNull())
    .addColumn('platform_id', 'text')
    .addColumn('username', 'text')
    .addColumn('title', 'text', (c) => c.notNull())
    // Folded "title username": case-insensitive channel search in every script on both engines.
    .addColumn('search_name', 'text', (c) => c.notNull())
    .addColumn('category_id', 'bigint', (c) => c.references('categories.id'))
    .addColumn('is_active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('last_scraped_at', 'bigint')
    .addColumn('total_messages_scraped', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('channels_identity_unique', ['platform', 'channel_key'])
    .execute();
  await db.schema.createIndex('channels_category_idx').on('channels').column('category_id').execute();

  await createTableWithId(db, engine, 'messages')
    .addColumn('channel_id', 'bigint', (c) => c.notNull().references('channels.id'))
    .addColumn('message_id', 'bigint', (c) => c.notNull())
    .addColumn('user_id', 'bigint')
    .addColumn('text', 'text', (c) => c.notNull())
    // Unicode-lowercased text: the one place case folding happens, identical on both engines.
    .addColumn('text_folded', 'text', (c) => c.notNull())
    .addColumn('text_hash', 'text', (c) => c.notNull())
    .addColumn('date', 'bigint', (c) => c.notNull())
    .addColumn('has_media', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('media_type', 'text')
    .addColumn('file_name', 'text')
    .addColumn('links', 'text')
    .addUniqueConstraint('messages_channel_message_unique', ['channel_id', 'message_id'])
    .execute();
  await db.schema.createIndex('messages_date_idx').on('messages').columns(['date', 'id']).execute();
  await db.schema.createIndex('messages_channel_date_idx').on('messages').columns(['channel_id', 'date']).execute();
  await db.schema.createIndex('messages_text_hash_idx').on('messages').column('text_hash').execute();

  if (engine === 'sqlite') {
    // External-content FTS5 over the folded text. The trigram tokenizer makes any substring of
    // three or more characters an index lookup; case_sensitive 1 because the column is folded.
    await sql`create virtual table messages_fts using fts5(text_folded, content='messages', content_rowid='id', tokenize='trigram case_sensitive 1')`.execute(
      db,
    );
    await sql`create trigger messages_fts_insert after insert on messages begin
      insert into messages_fts(rowid, text_folded) values (new.id, new.text_folded); end`.execute(db);
    await sql`create trigger messages_fts_delete after delete on messages begin
      insert into messages_fts(messages_fts, rowid, text_folded) values ('delete', old.id, old.text_folded); end`.execute(
      db,
    );
    await sql`create trigger messages_fts_update after update of text_folded on messages begin
      insert into messages_fts(messages_fts, rowid, text_folded) values ('delete', old.id, old.text_folded);
      insert into messages_fts(rowid, text_folded) values (new.id, new.text_folded); end`.execute(db);
  } else {
    await sql`create extension if not exists pg_trgm`.execute(db);
    await sql`create index messages_text_trgm_idx on messages using gin (text_folded gin_trgm_ops)`.execute(db);
  }

  await createTableWithId(db, engine, 'search_history')
    .addColumn('org_id', 'bigint', (c) => c.notNull().references('organizations.id'))
    .addColumn('user_id', 'bigint', (c) => c.references('users.id'))
    .addColumn('query', 'text', (c) => c.notNull())
    .addColumn('parsed_query', 'text', (c) => c.notNull())
    .addColumn('options', 'text', (c) => c.notNull())
    .addColumn('total_matches', 'integer', (c) => c.notNull())
    .addColumn('channels_matched', 'integer', (c) => c.notNull())
    .addColumn('snapshot_count', 'integer', (c) => c.notNull())
    // Highest message id at search time: re-reads compute channel lists as of then.
    .addColumn('watermark_message_id', 'bigint', (c) => c.notNull())
    .addColumn('searched_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('search_history_org_idx')
    .on('search_history')
    .columns(['org_id', 'searched_at'])
    .execute();

  await db.schema
    .createTable('search_history_results')
    .addColumn('history_id', 'bigint', (c) => c.notNull().references('search_history.id').onDelete('cascade'))
    .addColumn('rank', 'integer', (c) => c.notNull())
    .addColumn('message_id', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('search_history_results_pk', ['history_id', 'rank'])
    .execute();
}
