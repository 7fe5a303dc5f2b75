import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../../../../db/migration-helpers.ts';
import { monthlyPartitionName } from '../ingest/message-partitions.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// PostgreSQL: messages become a table partitioned by month of `date` (docs/architecture.md,
// "Search"). Each month's heap, date index and pg_trgm index are a fraction of the whole: a
// broad count scans the months side by side on parallel workers, a newest-first page walks the
// newest month's indexes first, and an old month can be detached or dropped on its own.
//
// A unique index of a partitioned table must hold the partition key, so (channel_id,
// message_id) can no longer be unique in `messages`: `message_keys` keeps that key once for the
// whole table, and the writer inserts a message only when its key was new
// (src/modules/sources/messenger/ingest/message-partitions.ts). The primary key becomes
// (id, date); ids still come from the same sequence, so watermarks keep their meaning.
//
// The whole migration runs in one transaction: an existing store's messages are copied once,
// which takes a few minutes per 10M messages (docs/operations.md, "Upgrading").
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  if (engine !== 'postgres') return;
  await sql`alter sequence messages_id_seq owned by none`.execute(db);
  await sql`alter table messages rename to messages_unpartitioned`.execute(db);
  await sql`create table messages (
      id bigint not null default nextval('messages_id_seq'),
      channel_id bigint not null references channels (id),
      message_id bigint not null,
      user_id bigint,
      text text not null,
      text_folded text not null,
      text_hash text not null,
      date bigint not null,
      has_media integer not null default 0,
      media_type text,
      file_name text,
      links text,
      constraint messages_pkey_by_month primary key (id, date)
    ) partition by range (date)`.execute(db);
  // Created while nothing reads the table: the partitions of the months already stored.
  const { rows: months } = await sql<{ start: string; end: string }>`
    select distinct
      (extract(epoch from date_trunc('month', to_timestamp(date / 1000.0) at time zone 'UTC')) * 1000)::bigint as start,
      (extract(epoch from date_trunc('month', to_timestamp(date / 1000.0) at time zone 'UTC') + interval '1 month') * 1000)::bigint as end
    from messages_unpartitioned`.execute(db);
  for (const month of months) {
    const [start, end] = [Number(month.start), Number(month.end)];
    await sql`create table ${sql.id(monthlyPartitionName(start))} partition of messages for values from (${sql.lit(start)}) to (${sql.lit(end)})`.execute(
      db,
    );
  }
  await sql`insert into messages select id, channel_id, message_id, user_id, text, text_folded, text_hash, date,
      has_media, media_type, file_name, links from messages_unpartitioned`.execute(db);

  await sql`create table message_keys (
      channel_id bigint not null,
      message_id bigint not null,
      constraint message_keys_pkey primary key (channel_id, message_id)
    )`.execute(db);
  await sql`insert into message_keys select channel_id, message_id from messages_unpartitioned`.execute(db);
  await sql`drop table messages_unpartitioned`.execute(db);
  await sql`alter sequence messages_id_seq owned by messages.id`.execute(db);

  // Indexes of the partitioned table: each partition, also one created later, gets its own.
  await sql`create index messages_date_idx on messages (date, id)`.execute(db);
  await sql`create index messages_channel_date_idx on messages (channel_id, date)`.execute(db);
  await sql`create index messages_text_hash_idx on messages (text_hash)`.execute(db);
  await sql`create index messages_text_trgm_idx on messages using gin (text_folded gin_trgm_ops)`.execute(db);
  await sql`analyze messages`.execute(db);
}
