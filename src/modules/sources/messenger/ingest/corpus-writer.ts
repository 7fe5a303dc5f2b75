import { createHash } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../../../db/schema.ts';
import type { Engine } from '../../../../db/store.ts';
import type { Clock } from '../../../../lib/clock.ts';
import type { Log } from '../../../../lib/log.ts';
import { foldText } from '../../common/query/query-language.ts';
import { createWordIndexWriter } from '../../common/query/word-index.ts';
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
const MESSAGES_PER_TRANSACTION = 1000;

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
 * Inserts the messages whose (channel, message id) is new. On PostgreSQL that key is kept
 * once in message_keys, as a partitioned `messages` cannot hold a unique index without the
 * month (migration messenger/0005); a message is inserted when its key was.
 */
async function insertMessages(
  tx: Transaction<Database>,
  channelId: number,
  messages: MessageInput[],
  partitions: PartitionKeeper | null,
): Promise<number> {
  let added = 0;
  for (let i = 0; i < messages.length; i += INSERT_ROWS_PER_STATEMENT) {
    let slice = messages.slice(i, i + INSERT_ROWS_PER_STATEMENT);
    if (partitions) {
      const inserted = await tx
        .insertInto('message_keys')
        .values(slice.map((m) => ({ channel_id: channelId, message_id: m.messageId })))
        .onConflict((oc) => oc.doNothing())
        .returning('message_id')
        .execute();
      const fresh = new Set(inserted.map((row) => Number(row.message_id)));
      // The first of two copies in one slice stands, as a unique index would keep it.
      slice = slice.filter((m) => fresh.delete(m.messageId));
      if (slice.length === 0) continue;
      await partitions.ensure(
        tx,
        slice.map((m) => m.date),
      );
    }
    const rows = slice.map((m) => ({
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
    }));
    const insert = tx.insertInto('messages').values(rows);
    const result = await (
      partitions ? insert : insert.onConflict((oc) => oc.columns(['channel_id', 'message_id']).doNothing())
    ).executeTakeFirst();
    added += Number(result.numInsertedOrUpdatedRows ?? 0n);
  }
  return added;
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
  function writeTransaction(
    batches: ChannelBatch[],
    partitions: PartitionKeeper | null,
    channelIds: Set<number>,
  ): Promise<number> {
    return inMessageTransaction({ db, engine, words }, async (tx) => {
      let added = 0;
      for (const batch of batches) {
        const channelId = await upsertChannel(tx, batch.channel);
        channelIds.add(channelId);
        added += await insertMessages(tx, channelId, batch.messages, partitions);
      }
      return added;
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
     * messages: SQLite has one write lock for every process, and a source written in one
     * transaction kept the server's writes (a login, the rate-limit counts) waiting for as long
     * as the whole file took. A source that fails half-way keeps the transactions committed
     * before (counted in `totals` as they commit); written again, those add nothing.
     */
    async write(
      batches: AsyncIterable<ChannelBatch> | Iterable<ChannelBatch>,
      onBatch?: (messages: number) => void,
      totals: WriteTotals = { channels: 0, added: 0, duplicates: 0 },
    ): Promise<WriteTotals> {
      const partitions = engine === 'postgres' ? createPartitionKeeper() : null;
      const channelIds = new Set<number>();
      try {
        for await (const group of transactionGroups(batches, MESSAGES_PER_TRANSACTION)) {
          const added = await writeTransaction(group.batches, partitions, channelIds);
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
