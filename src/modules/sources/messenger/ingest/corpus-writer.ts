import { hash } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../../../db/schema.ts';
import type { Engine } from '../../../../db/store.ts';
import type { Clock } from '../../../../lib/clock.ts';
import type { BackgroundTasks, Log } from '../../../../lib/log.ts';
import { foldText } from '../../common/query/query-language.ts';
import { createWordIndexWriter, messageWords, type WordIndexWriter } from '../../common/query/word-index.ts';
import { addWordBits } from '../../common/query/word-bitmaps.ts';
import { slices, writeRowsIn } from '../../../../db/bulk-insert.ts';
import { copyRow, createStagingTable, STAGING_ORDER, type CopyIn } from '../../../../db/pg-copy.ts';
import { createPartitionKeeper, type PartitionKeeper } from './message-partitions.ts';
import { inMessageTransaction, transactionGroups, wordStatisticsRefresh } from './message-transactions.ts';

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

// White space other than a single space: what the hash's normalising changes (most texts have none).
const UNUSUAL_SPACE = /[^\S ]|\s\s/;

/** Identical texts (modulo surrounding and repeated white space) share a hash: unique_only. */
export const textHash = (text: string): string => {
  const trimmed = text.trim();
  const normal = UNUSUAL_SPACE.test(trimmed) ? trimmed.replace(/\s+/g, ' ') : trimmed;
  // The one-shot hash: a Hash object a message cost the writer ~7 µs of its ~45 (at 1M messages).
  return hash('sha1', normal, 'base64url').slice(0, 22);
};

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
 * A message's columns of `messages` but its channel's: the one list of the columns a writer
 * sets, which both stores' paths (a multi-row INSERT, COPY into a staging table and its merge)
 * take from here.
 */
const messageFields = (m: MessageInput) => ({
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

type MessageFields = ReturnType<typeof messageFields>;

/**
 * A message made ready for its transaction before the transaction starts (while the one before
 * runs), placed by its batch, whose channel id the transaction gives; on PostgreSQL with its
 * fields already in COPY's text format (in the order of their keys).
 */
interface PreparedMessage {
  batch: number;
  fields: MessageFields;
  copyFields: string | null;
}

/** A transaction's worth of batches, prepared: each (channel, message id) once, the first copy. */
interface PreparedGroup {
  batches: ChannelBatch[];
  messages: PreparedMessage[];
  /** How many messages the batches held, duplicates included. */
  count: number;
  /** PostgreSQL: each message's word ids as an intarray literal and as numbers, in the order of `messages`. */
  wordIds: { lists: string[]; ids: (message: number) => Int32Array } | null;
}

/**
 * PostgreSQL: the messages whose (channel, message id) is new, in one merge, and their word
 * index. A partitioned `messages` cannot hold a unique index without the month (migration
 * messenger/0005), so that key is kept once in message_keys, and a message is inserted when its
 * key was. The rows are COPYed into a staging table and merged by one statement: new keys first,
 * then their messages in the order they came (ids ascending). The group holds each key once
 * (prepareGroup keeps the first of two copies, as a unique index would). The added messages'
 * word ids (`wordIds`, in the order of `messages`) are COPYed into message_words with the ids
 * they got, and their frequent words' bits (word-bitmaps.ts) in the same transaction. `streaming`
 * is called when the rows start to go to the server.
 */
async function copyMessages(
  tx: Transaction<Database>,
  copy: CopyIn,
  group: PreparedGroup,
  channelIds: number[],
  partitions: PartitionKeeper,
  streaming: () => void,
): Promise<number> {
  const { messages, wordIds } = group;
  const names = ['channel_id', ...Object.keys(messages[0]!.fields)] as Array<'channel_id' | keyof MessageFields>;
  // The merge sorts the batch (a few MB of text): at the default 4 MB work_mem it spilled to
  // temporary files. The word index's pending list is merged under maintenance_work_mem.
  await sql`select set_config('work_mem', '64MB', true), set_config('maintenance_work_mem', '64MB', true)`.execute(tx);
  await partitions.ensure(
    tx,
    messages.map((message) => message.fields.date),
  );
  await createStagingTable(tx, { name: 'messages_staging', like: 'messages', columns: names });
  streaming();
  await copy(
    'messages_staging',
    [STAGING_ORDER, ...names],
    messages.map((message, i) => `${i}\t${channelIds[message.batch]}\t${message.copyFields}`),
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
  // Ids ascending: a message's position in its channel follows its id (word-bitmaps.ts).
  inserted.sort((a, b) => Number(a.id) - Number(b.id));
  const rowOf = new Map(messages.map((m, i) => [`${channelIds[m.batch]}:${m.fields.message_id}`, i]));
  const positions = inserted.map((row) => rowOf.get(`${row.channel_id}:${row.message_id}`)!);
  await copy(
    'message_words',
    ['id', 'channel_id', 'word_ids'],
    // Digits, commas and braces: nothing COPY's text format escapes.
    inserted.map((row, i) => `${row.id}\t${row.channel_id}\t${wordIds!.lists[positions[i]!]!}`),
  );
  // The transaction's word-index entries went to the GIN index's pending list, whose limit is
  // above a transaction's (migration messenger/0014): moved into the index here, in one pass,
  // each word's posting list rewritten once, and searches find the list empty again.
  if (inserted.length > 0) await sql`select gin_clean_pending_list('message_words_channel_words_idx')`.execute(tx);
  await addWordBits(
    tx,
    inserted.map((row) => Number(row.id)),
    inserted.map((row) => Number(row.channel_id)),
    (i) => wordIds!.ids(positions[i]!),
  );
  return inserted.length;
}

/**
 * Messages prepared between two yields to the event loop, so that a transaction in flight goes
 * on: its COPY sends a chunk of rows a turn, which the server parses in a fraction of the time
 * node takes to prepare a slice of 1,000 (~40 ms), so larger slices left the server waiting.
 */
const PREPARE_SLICE = 250;
const breather = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Folds, hashes and (with `words`, PostgreSQL) maps to word ids the messages of a group, each
 * (channel, message id) once: the first copy stands, as a unique index would have it. The
 * lexicon's new words are committed here, in a short transaction of their own (an id that no
 * message uses is harmless to a search), so the message transaction only streams rows in.
 */
async function prepareGroup(
  group: { batches: ChannelBatch[]; messages: number },
  words?: { writer: WordIndexWriter; db: Kysely<Database> },
): Promise<PreparedGroup> {
  const seen = new Set<string>();
  const messages: PreparedMessage[] = [];
  const perMessage: Array<readonly string[]> = [];
  for (const [batch, { channel, messages: inBatch }] of group.batches.entries()) {
    // Platform and channel key are the channels' unique key: one key, one channel id.
    const channelPrefix = `${channel.platform}\n${channelKey(channel)}\n`;
    for (const message of inBatch) {
      const key = channelPrefix + message.messageId;
      if (seen.has(key)) continue;
      seen.add(key);
      const fields = messageFields(message);
      messages.push({ batch, fields, copyFields: words ? copyRow(Object.values(fields)) : null });
      if (words) perMessage.push(messageWords(fields.text_folded));
      if (messages.length % PREPARE_SLICE === 0) await breather();
    }
  }
  let wordIds: PreparedGroup['wordIds'] = null;
  if (words && messages.length > 0) {
    const { lists, ids, commit } = await words.db
      .transaction()
      .execute((tx) => words.writer.wordIdLists(tx, perMessage, { every: PREPARE_SLICE, breathe: breather }));
    commit();
    wordIds = { lists, ids };
  }
  return { batches: group.batches, messages, count: group.messages, wordIds };
}

/**
 * Writes channels and messages, in bounded transactions. Re-writing the same messages adds
 * nothing (unique on channel + message id).
 */
export function createCorpusWriter(deps: {
  db: Kysely<Database>;
  engine: Engine;
  clock: Clock;
  log: Log;
  background: BackgroundTasks;
}) {
  const { db, engine, clock } = deps;
  const words = engine === 'postgres' ? { writer: createWordIndexWriter(), db } : undefined;
  const refreshAfter = wordStatisticsRefresh(deps);

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

  /**
   * One transaction's worth of messages: its channels, their messages and their index rows.
   * `streaming` is called once the small statements are through and the rows go to the server.
   */
  function writeTransaction(group: PreparedGroup, channelIds: Set<number>, streaming: () => void): Promise<number> {
    return inMessageTransaction({ db, engine }, async (tx, copy) => {
      const ids: number[] = [];
      for (const batch of group.batches) {
        const channelId = await upsertChannel(tx, batch.channel);
        channelIds.add(channelId);
        ids.push(channelId);
      }
      if (group.messages.length === 0) return 0;
      if (!copy) streaming();
      // One keeper per transaction: a month it created is gone again if the transaction rolls back.
      return copy
        ? copyMessages(tx, copy, group, ids, createPartitionKeeper(), streaming)
        : writeRowsIn(tx, null, {
            table: 'messages',
            rows: group.messages.map(({ batch, fields }) => ({ channel_id: ids[batch]!, ...fields })),
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
      const addedBefore = totals.added;
      const commit = async (group: PreparedGroup, streaming: () => void) => {
        const added = await writeTransaction(group, channelIds, streaming);
        totals.channels = channelIds.size;
        totals.added += added;
        totals.duplicates += group.count - added;
        onBatch?.(group.count);
      };
      // Node prepares the next group (folding, hashing, word ids) while the server merges the
      // one before: on a machine of two cores the two sides no longer take turns. It starts once
      // that transaction's small statements (channels, partitions, staging table) are through:
      // prepared beside them, each of their round trips waited for a slice of the preparation
      // while the server sat idle (11,100 → 13,600 msg/s, docs/performance.md).
      let inFlight: Promise<void> | undefined;
      let streamed: Promise<void> = Promise.resolve();
      try {
        for await (const group of transactionGroups(batches, MESSAGES_PER_TRANSACTION[engine])) {
          await streamed;
          const prepared = await prepareGroup(group, words);
          await inFlight;
          let resolve = () => {};
          streamed = new Promise<void>((settle) => (resolve = settle));
          inFlight = commit(prepared, resolve);
          // Awaited before the next one starts or below; until then a failure waits there (and
          // a transaction that failed before streaming lets the next preparation start).
          inFlight.then(resolve, resolve);
        }
        await inFlight;
      } finally {
        // A transaction still running (the next group's preparation failed) ends before the
        // counts are taken and the caller hears of the failure.
        await inFlight?.catch(() => undefined);
        // The counts are a convenience of the channel list: a failure to refresh them (the write
        // lock busy past its wait) is logged, and neither hides the write's own error nor fails
        // a write that succeeded; the next write to the channel counts again.
        await countChannels(channelIds).catch((error: unknown) =>
          deps.log("messenger: the channels' message counts were not refreshed", error),
        );
        refreshAfter(totals.added - addedBefore);
      }
      return totals;
    },
  };
}

export type CorpusWriter = ReturnType<typeof createCorpusWriter>;
