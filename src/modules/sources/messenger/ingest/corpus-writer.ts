import { createHash } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../../../db/schema.ts';
import type { Engine } from '../../../../db/store.ts';
import type { Clock } from '../../../../lib/clock.ts';
import type { Log } from '../../../../lib/log.ts';
import { foldText } from '../../common/query/query-language.ts';
import { createWordIndexWriter, type WordIndexRow } from '../../common/query/word-index.ts';
import { slices, writeRowsIn } from '../../../../db/bulk-insert.ts';
import { createStagingTable, STAGING_ORDER, type CopyIn } from '../../../../db/pg-copy.ts';
import { createPartitionKeeper, type PartitionKeeper } from './message-partitions.ts';
import { inMessageTransaction, transactionGroups } from './message-transactions.ts';

export interface ChannelInput {
  platform: string;
  platformId?: string | null;
  username?: string | null;
  title: string;
  category?: string | null;
  isActive?: boolean;
}

export interface MessageInput {
  messageId: number;
  userId: number | null;
  text: string;
  /** Epoch milliseconds. */
  date: number;
  hasMedia: boolean;
  mediaType: string | null;
  fileName: string | null;
  links: string[] | null;
  /** A forward's origin as the export names it (a channel's title, a person's name). */
  forwardedFrom?: string | null;
  /** The origin's id as the export writes it (`channel1234`, `user42`). */
  forwardedFromId?: string | null;
  viaBot?: string | null;
  replyToMessageId?: number | null;
  /** Epoch milliseconds of the last edit. */
  editedAt?: number | null;
}

export interface ChannelBatch {
  channel: ChannelInput;
  messages: MessageInput[];
}

export interface WriteTotals {
  channels: number;
  added: number;
  duplicates: number;
}

const INSERT_ROWS_PER_STATEMENT = 500;
/**
 * SQLite has one write lock for every process: a source written in one transaction kept the
 * server's writes (a login, the rate-limit counts) waiting for as long as the whole file took.
 * PostgreSQL writers lock only what they write; there a larger transaction spreads its fixed
 * costs (the staging table, the merge's plan, the commit's WAL flush) over more messages.
 */
const MESSAGES_PER_TRANSACTION: Record<Engine, number> = { sqlite: 1000, postgres: 10_000 };

/** Identical texts (modulo surrounding and repeated white space) share a hash: unique_only. */
export const textHash = (text: string): string =>
  createHash('sha1').update(text.trim().replace(/\s+/g, ' ')).digest('base64url').slice(0, 22);

/**
 * What search looks in: the text, and a forward's origin after it, so that searching for a
 * channel's name finds what was forwarded from it (the text and its hash stay the message's own).
 */
const foldedText = (message: MessageInput): string =>
  foldText(message.forwardedFrom ? `${message.text}\n${message.forwardedFrom}` : message.text);

const channelKey = (channel: ChannelInput): string =>
  channel.platformId
    ? `id:${channel.platformId}`
    : channel.username
      ? `username:${channel.username.toLowerCase()}`
      : `title:${channel.title}`;

/**
 * A message as its row of `messages`: the one list of the columns a writer sets, which both
 * stores' paths (a multi-row INSERT, COPY into a staging table and its merge) take from here.
 */
const messageRow = (channelId: number, m: MessageInput) => ({
  channel_id: channelId,
  message_id: m.messageId,
  user_id: m.userId,
  text: m.text,
  text_folded: foldedText(m),
  text_hash: textHash(m.text),
  date: m.date,
  has_media: m.hasMedia ? 1 : 0,
  media_type: m.mediaType,
  file_name: m.fileName,
  links: m.links?.length ? JSON.stringify(m.links) : null,
  forwarded_from: m.forwardedFrom ?? null,
  forwarded_from_id: m.forwardedFromId ?? null,
  via_bot: m.viaBot ?? null,
  reply_to_message_id: m.replyToMessageId ?? null,
  edited_at: m.editedAt ?? null,
});

type MessageRow = ReturnType<typeof messageRow>;

/**
 * PostgreSQL: the messages whose (channel, message id) is new, in one merge. A partitioned
 * `messages` cannot hold a unique index without the month (migration messenger/0005), so that
 * key is kept once in message_keys, and a message is inserted when its key was. The rows are
 * COPYed into a staging table and merged by one statement: new keys first, then their messages
 * in the order they came (ids ascending). `rows` hold each key once (the caller keeps the
 * first of two copies, as a unique index would).
 */
async function copyMessages(
  tx: Transaction<Database>,
  copy: CopyIn,
  rows: MessageRow[],
  partitions: PartitionKeeper,
): Promise<WordIndexRow[]> {
  const names = Object.keys(rows[0]!) as Array<keyof MessageRow>;
  // The merge sorts the batch (a few MB of text) twice, and the trigram indexes' pending lists
  // are merged into their trees in work_mem-sized rounds: at the default 4 MB the sorts spilled
  // to temporary files and the rounds were many and small.
  await sql`set local work_mem = '64MB'`.execute(tx);
  await partitions.ensure(
    tx,
    rows.map((row) => row.date),
  );
  await createStagingTable(tx, { name: 'messages_staging', like: 'messages', columns: names });
  await copy(
    'messages_staging',
    [STAGING_ORDER, ...names],
    rows.map((row, i) => [i, ...names.map((name) => row[name])]),
  );
  const staged = sql.join(names.map((name) => sql.ref(`s.${name}`)));
  // Built as an INSERT query, not raw SQL: the write tally (db/maintenance.ts) counts its rows,
  // and a large ingest analyzes `messages` (autovacuum never analyzes a partitioned parent).
  const inserted = await tx
    .with('fresh', (db) =>
      db
        .insertInto('message_keys')
        .columns(['channel_id', 'message_id'])
        .expression(sql`select channel_id, message_id from messages_staging`)
        .onConflict((oc) => oc.doNothing())
        .returning(['channel_id', 'message_id']),
    )
    .insertInto('messages')
    .columns(names)
    .expression(
      sql`select ${staged} from messages_staging s join fresh using (channel_id, message_id) order by s.${sql.ref(STAGING_ORDER)}`,
    )
    .returning(['id', 'channel_id', 'message_id'])
    .execute();
  // The rows added, with the ids they got, for the word index: their texts are the ones sent.
  const textOf = new Map(rows.map((row) => [`${row.channel_id}:${row.message_id}`, row.text_folded]));
  return inserted.map((row) => ({
    id: Number(row.id),
    channel_id: Number(row.channel_id),
    text_folded: textOf.get(`${row.channel_id}:${row.message_id}`)!,
  }));
}

/** The rows of a transaction's batches, each (channel, message id) once: the first copy stands. */
function firstCopies(batches: Array<{ channelId: number; messages: MessageInput[] }>): MessageRow[] {
  const seen = new Set<string>();
  const rows: MessageRow[] = [];
  for (const { channelId, messages } of batches) {
    for (const message of messages) {
      const key = `${channelId}:${message.messageId}`;
      if (seen.has(key)) continue;
      seen.add(key);
      rows.push(messageRow(channelId, message));
    }
  }
  return rows;
}

/**
 * Writes channels and messages, in bounded transactions. Re-writing the same messages adds
 * nothing (unique on channel + message id).
 */
export function createCorpusWriter(deps: { db: Kysely<Database>; engine: Engine; clock: Clock; log: Log }) {
  const { db, engine, clock } = deps;
  const words = engine === 'postgres' ? createWordIndexWriter() : undefined;

  /** The category's id, created when missing (unique name: of two writers at once, one inserts). */
  async function categoryId(tx: Transaction<Database>, name: string): Promise<number> {
    const find = () => tx.selectFrom('categories').select('id').where('name', '=', name).executeTakeFirst();
    const found =
      (await find()) ??
      (await tx
        .insertInto('categories')
        .values({ name, created_at: clock.now().getTime() })
        .onConflict((oc) => oc.column('name').doNothing())
        .returning('id')
        .executeTakeFirst()) ??
      (await find());
    return Number(found!.id);
  }

  async function upsertChannel(tx: Transaction<Database>, channel: ChannelInput): Promise<number> {
    const key = channelKey(channel);
    const category = channel.category ? await categoryId(tx, channel.category) : null;
    const values = {
      username: channel.username ?? null,
      title: channel.title,
      search_name: foldText(`${channel.title} ${channel.username ?? ''}`.trim()),
      platform_id: channel.platformId ?? null,
      ...(category !== null ? { category_id: category } : {}),
      ...(channel.isActive !== undefined ? { is_active: channel.isActive ? 1 : 0 } : {}),
    };
    const row = await tx
      .insertInto('channels')
      .values({ ...values, platform: channel.platform, channel_key: key, created_at: clock.now().getTime() })
      .onConflict((oc) => oc.columns(['platform', 'channel_key']).doUpdateSet(values))
      .returning('id')
      .executeTakeFirstOrThrow();
    return Number(row.id);
  }

  /** One transaction's worth of messages: its channels, their messages and their FTS rows. */
  function writeTransaction(batches: ChannelBatch[], channelIds: Set<number>): Promise<number> {
    return inMessageTransaction({ db, engine, words }, async (tx, copy) => {
      const channels: Array<{ channelId: number; messages: MessageInput[] }> = [];
      for (const batch of batches) {
        const channelId = await upsertChannel(tx, batch.channel);
        channelIds.add(channelId);
        channels.push({ channelId, messages: batch.messages });
      }
      const rows = firstCopies(channels);
      if (rows.length === 0) return 0;
      // One keeper per transaction: a month it created is gone again if the transaction rolls back.
      return copy
        ? copyMessages(tx, copy, rows, createPartitionKeeper())
        : writeRowsIn(tx, null, {
            table: 'messages',
            rows,
            conflict: ['channel_id', 'message_id'],
            statements: slices(INSERT_ROWS_PER_STATEMENT),
          });
    });
  }

  /** The channels' message counts, once a source is written (or stopped). */
  async function countChannels(channelIds: Set<number>): Promise<void> {
    const now = clock.now().getTime();
    for (const id of channelIds) {
      await db
        .updateTable('channels')
        .set((eb) => ({
          last_scraped_at: now,
          total_messages_scraped: eb
            .selectFrom('messages')
            .select((m) => m.fn.countAll<number>().as('n'))
            .where('channel_id', '=', id),
        }))
        .where('id', '=', id)
        .execute();
    }
  }

  return {
    /**
     * Writes the batches of one source in transactions of at most MESSAGES_PER_TRANSACTION
     * messages. A source that fails half-way keeps the transactions committed
     * before (counted in `totals` as they commit); written again, those add nothing.
     */
    async write(
      batches: AsyncIterable<ChannelBatch> | Iterable<ChannelBatch>,
      onBatch?: (messages: number) => void,
      totals: WriteTotals = { channels: 0, added: 0, duplicates: 0 },
    ): Promise<WriteTotals> {
      const channelIds = new Set<number>();
      try {
        for await (const group of transactionGroups(batches, MESSAGES_PER_TRANSACTION[engine])) {
          const added = await writeTransaction(group.batches, channelIds);
          totals.channels = channelIds.size;
          totals.added += added;
          totals.duplicates += group.messages - added;
          onBatch?.(group.messages);
        }
      } finally {
        // The counts are a convenience of the channel list: a failure to refresh them (the write
        // lock busy past its wait) is logged, and neither hides the write's own error nor fails
        // a write that succeeded; the next write to the channel counts again.
        await countChannels(channelIds).catch((error: unknown) =>
          deps.log("messenger: the channels' message counts were not refreshed", error),
        );
      }
      return totals;
    },
  };
}

export type CorpusWriter = ReturnType<typeof createCorpusWriter>;
