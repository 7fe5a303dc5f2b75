import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../../../db/schema.ts';
import { HAS_LONG_WORDS } from './word-index.ts';

/**
 * PostgreSQL: bitmaps of the messages holding each frequent word (migrations messenger/0012 and
 * 0013, docs/architecture.md "Search"). A word in a large share of the messages (`with`, in 39%
 * of them) is counted through the word index by reading one narrow row per match: 390k rows, a
 * parallel scan of all of message_words, as long as `grep -i` over every text. Its bitmap, one
 * bit a message id in blocks of BLOCK_BITS ids, is counted with `bit_count` in under a
 * millisecond. Words become frequent by PostgreSQL's own statistics of `message_words.word_ids`
 * (ANALYZE's most common elements, refreshed by autovacuum), so no count is kept per word; a
 * word's bitmaps are built from the word index when it becomes frequent, and the message writer
 * sets the bits of every message it adds in the same transaction, so that a snapshot sees the
 * bitmaps and the messages alike. Messages are never deleted, so bits are never cleared.
 *
 * Each frequent word also has a bitmap per channel, one bit per position of a message in its
 * channel (its rank by id, from 0), so that a channel filter counts its channels' bits and no
 * other: a channel's messages are spread over the whole id range when channels are written
 * side by side. message_channel_sizes holds each channel's number of messages, moved in the
 * writer's transaction: read in the same statement as a search's watermark, it is the position
 * up to which that search counts.
 */

/**
 * Message ids a bitmap row covers: 1 KB of bits, below the size PostgreSQL compresses or moves
 * out of line. A write rewrites the rows of the blocks its messages fall in, one per frequent
 * word: a transaction of one message rewrites about 40 rows (the words of a message), so a row
 * is kept small; counting `with` at 1M messages ORs 123 of them.
 */
const BLOCK_BITS = 1 << 13;
/**
 * Channel positions a per-channel bitmap row covers: 128 bytes, as most channels hold a few
 * thousand messages (a 2,000-message channel has two rows a word).
 */
const CHANNEL_BLOCK_BITS = 1 << 10;
/** Words in at least this share of the messages (by the statistics' estimate) get a bitmap. */
const FREQUENT_SHARE = 0.01;
/** Ids of the word index read at a time when the bitmaps of newly frequent words are built. */
const BUILD_ROWS = 100_000;
/** Bitmap rows written by one statement. */
const ROWS_PER_STATEMENT = 10_000;

const BLOCK_BYTES = BLOCK_BITS / 8;
const CHANNEL_BLOCK_BYTES = CHANNEL_BLOCK_BITS / 8;

/** `slotOf[id]`: the index of lexicon id `id` in `words`, or -1. */
function wordSlots(words: readonly number[]): Int32Array {
  const slotOf = new Int32Array(Math.max(...words) + 1).fill(-1);
  words.forEach((word, slot) => (slotOf[word] = slot));
  return slotOf;
}

const hexOf = (bits: Uint8Array) => Buffer.from(bits.buffer, bits.byteOffset, bits.byteLength).toString('hex');

/** Upserts bitmap rows into `table`, ORing them into the rows already there. */
async function upsertBits(
  db: Kysely<Database>,
  table: 'message_word_bits' | 'message_channel_word_bits',
  rows: { channels?: number[]; words: number[]; blocks: number[]; hex: string[] },
) {
  for (let from = 0; from < rows.words.length; from += ROWS_PER_STATEMENT) {
    const slice = <T>(values: T[]) => values.slice(from, from + ROWS_PER_STATEMENT);
    const words = sql`${slice(rows.words)}::int[], ${slice(rows.blocks)}::int[], ${slice(rows.hex)}::text[]`;
    if (table === 'message_word_bits') {
      await sql`insert into message_word_bits (word_id, block, bits)
          select word_id, block, ('x' || hex)::bit varying from unnest(${words}) as t (word_id, block, hex)
          on conflict (word_id, block) do update set bits = message_word_bits.bits | excluded.bits`.execute(db);
    } else {
      await sql`insert into message_channel_word_bits (channel_id, word_id, block, bits)
          select channel_id, word_id, block, ('x' || hex)::bit varying
          from unnest(${slice(rows.channels!)}::bigint[], ${words}) as t (channel_id, word_id, block, hex)
          on conflict (channel_id, word_id, block) do update set bits = message_channel_word_bits.bits | excluded.bits`.execute(
        db,
      );
    }
  }
}

/** Messages a writer adds or a build reads: ids ascending, each with its channel and its position there. */
interface MessageBatch {
  ids: ArrayLike<number>;
  channels: ArrayLike<number>;
  positions: ArrayLike<number>;
  /** The lexicon ids of message `i`. */
  wordIds: (i: number) => ArrayLike<number>;
}

/** The blocks of `map` (of `blockBytes` each, the first numbered `first`) with a bit set, as [block, hex]. */
function* filledBlocks(map: Uint8Array, blockBytes: number, first: number) {
  for (let block = 0; block * blockBytes < map.length; block++) {
    const bits = map.subarray(block * blockBytes, (block + 1) * blockBytes);
    if (bits.some((byte) => byte !== 0)) yield [first + block, hexOf(bits)] as const;
  }
}

/**
 * ORs the bits of `batch` into the stored bitmaps of `words` (and, with `perChannel`, into
 * their channels' bitmaps), each row created when missing. The message-id bits are set in one
 * array a word over the blocks the messages span (a writer's messages have consecutive ids), a
 * channel's in one array a word over the blocks its positions span (consecutive too); the words
 * are found through an array indexed by lexicon id: a Map of bitmaps per word and block cost an
 * ingest of 50,000 messages a second of CPU.
 */
async function storeBits(db: Kysely<Database>, words: readonly number[], batch: MessageBatch, perChannel: boolean) {
  const count = batch.ids.length;
  if (words.length === 0 || count === 0) return;
  const slotOf = wordSlots(words);
  /** Calls `each` with the slot of every word of `words` that message `i` holds. */
  const slotsOf = (i: number, each: (slot: number) => void) => {
    const ids = batch.wordIds(i);
    for (let w = 0; w < ids.length; w++) {
      const slot = ids[w]! < slotOf.length ? slotOf[ids[w]!]! : -1;
      if (slot >= 0) each(slot);
    }
  };
  const setBit = (map: Uint8Array, at: number) => (map[at >> 3]! |= 0x80 >> (at & 7));

  const firstBlock = Math.floor(batch.ids[0]! / BLOCK_BITS);
  const blockCount = Math.floor(batch.ids[count - 1]! / BLOCK_BITS) - firstBlock + 1;
  const maps = words.map(() => new Uint8Array(blockCount * BLOCK_BYTES));
  for (let i = 0; i < count; i++) {
    const at = batch.ids[i]! - firstBlock * BLOCK_BITS;
    slotsOf(i, (slot) => setBit(maps[slot]!, at));
  }
  const byId = { words: [] as number[], blocks: [] as number[], hex: [] as string[] };
  words.forEach((word, slot) => {
    for (const [block, hex] of filledBlocks(maps[slot]!, BLOCK_BYTES, firstBlock)) {
      byId.words.push(word);
      byId.blocks.push(block);
      byId.hex.push(hex);
    }
  });
  await upsertBits(db, 'message_word_bits', byId);
  if (!perChannel) return;

  // Each channel's blocks, from those of its lowest position in the batch to its highest.
  const channels = new Map<number, { first: number; blocks: number; maps: (Uint8Array | undefined)[] }>();
  for (let i = 0; i < count; i++) {
    const block = Math.floor(batch.positions[i]! / CHANNEL_BLOCK_BITS);
    const channel = channels.get(batch.channels[i]!);
    if (!channel) channels.set(batch.channels[i]!, { first: block, blocks: 1, maps: [] });
    else channel.blocks = Math.max(channel.blocks, block - channel.first + 1);
  }
  for (let i = 0; i < count; i++) {
    const channel = channels.get(batch.channels[i]!)!;
    const at = batch.positions[i]! - channel.first * CHANNEL_BLOCK_BITS;
    slotsOf(i, (slot) => setBit((channel.maps[slot] ??= new Uint8Array(channel.blocks * CHANNEL_BLOCK_BYTES)), at));
  }
  const byChannel = { channels: [] as number[], words: [] as number[], blocks: [] as number[], hex: [] as string[] };
  for (const [channel, { first, maps: channelMaps }] of channels) {
    channelMaps.forEach((map, slot) => {
      for (const [block, hex] of filledBlocks(map!, CHANNEL_BLOCK_BYTES, first)) {
        byChannel.channels.push(channel);
        byChannel.words.push(words[slot]!);
        byChannel.blocks.push(block);
        byChannel.hex.push(hex);
      }
    });
  }
  await upsertBits(db, 'message_channel_word_bits', byChannel);
}

/**
 * Gives bitmaps to `fresh` words: the word index is read in id ranges, and of each only the rows
 * holding one of the words come back, with their positions in their channels (the channel's
 * rows before the range, carried from range to range, and its rows before them in the range).
 * Run inside a writer's turn, so no message is added meanwhile. Sending every row to be placed
 * here cost an ingest's refresh (word-statistics, message-transactions.ts) seconds of this
 * process's CPU per word that became frequent at 1M messages, where a word in 1% of them has
 * 10,000 rows.
 */
async function buildBitmaps(db: Kysely<Database>, fresh: readonly number[]) {
  // Migration messenger/0012 builds the message-id bitmaps before 0013 adds the per-channel ones
  // (and builds them all again).
  const { rows: tables } = await sql<{ present: boolean; last: string | null }>`
    select to_regclass('message_channel_word_bits') is not null as present,
      (select max(id) from message_words) as last`.execute(db);
  const perChannel = tables[0]!.present;
  const last = Number(tables[0]!.last ?? 0);
  const before = new Map<number, number>();
  for (let above = 0; above < last; above += BUILD_ROWS) {
    const range = sql`id > ${above} and id <= ${above + BUILD_ROWS}`;
    const { rows } = await sql<{ id: string; channel_id: string; rank: number; words: number[] }>`
      select id, channel_id, rank, words from (
        select id, channel_id, (row_number() over (partition by channel_id order by id) - 1)::int as rank,
          word_ids & ${fresh}::int[] as words
        from message_words where ${range}) r
      where cardinality(words) > 0 order by id`.execute(db);
    await storeBits(
      db,
      fresh,
      {
        ids: rows.map((row) => Number(row.id)),
        channels: rows.map((row) => Number(row.channel_id)),
        positions: rows.map((row) => (before.get(Number(row.channel_id)) ?? 0) + row.rank),
        wordIds: (i) => rows[i]!.words,
      },
      perChannel,
    );
    const { rows: sizes } = await sql<{ channel_id: string; n: number }>`
      select channel_id, count(*)::int as n from message_words where ${range} group by channel_id`.execute(db);
    for (const { channel_id, n } of sizes) before.set(Number(channel_id), (before.get(Number(channel_id)) ?? 0) + n);
  }
}

/**
 * The words with a bitmap, after giving bitmaps to each word the statistics now find frequent
 * (its messages so far, those `db`'s transaction added among them). Run by message writers,
 * which take turns (message-transactions.ts): no message is added between a word's reading and
 * the next writer's bits.
 */
export async function frequentWords(db: Kysely<Database>): Promise<number[]> {
  const { rows: fresh } = await sql<{ word_id: number }>`
    insert into message_frequent_words (word_id)
    select distinct e from pg_stats s, unnest(s.most_common_elems::text::int[], s.most_common_elem_freqs) as t (e, share)
    where s.schemaname = current_schema() and s.tablename = 'message_words' and s.attname = 'word_ids'
      and e > 0 and share >= ${FREQUENT_SHARE}
    on conflict (word_id) do nothing returning word_id`.execute(db);
  if (fresh.length)
    await buildBitmaps(
      db,
      fresh.map((row) => row.word_id),
    );
  const { rows } = await sql<{ word_id: number }>`select word_id from message_frequent_words`.execute(db);
  return rows.map((row) => row.word_id);
}

/**
 * The positions in their channels of messages a writer adds (ids ascending, `channels[i]` the
 * channel of the i-th), the channels' sizes moved past them in the writer's transaction.
 */
async function channelPositions(db: Kysely<Database>, channels: readonly number[]): Promise<Int32Array> {
  const added = new Map<number, number>();
  for (const channel of channels) added.set(channel, (added.get(channel) ?? 0) + 1);
  const { rows } = await sql<{ channel_id: string; messages: number }>`
    insert into message_channel_sizes (channel_id, messages)
    select * from unnest(${[...added.keys()]}::bigint[], ${[...added.values()]}::int[])
    on conflict (channel_id) do update set messages = message_channel_sizes.messages + excluded.messages
    returning channel_id, messages`.execute(db);
  const next = new Map(rows.map((row) => [Number(row.channel_id), row.messages - added.get(Number(row.channel_id))!]));
  return Int32Array.from(channels, (channel) => {
    const position = next.get(channel)!;
    next.set(channel, position + 1);
    return position;
  });
}

/**
 * Sets the bits of messages a writer's transaction added (ids ascending): `channels[i]` and
 * `wordIds(i)` are the channel and the lexicon ids of the message `messageIds[i]`.
 */
export async function addWordBits(
  db: Kysely<Database>,
  messageIds: readonly number[],
  channels: readonly number[],
  wordIds: (i: number) => ArrayLike<number>,
): Promise<void> {
  if (messageIds.length === 0) return;
  const positions = await channelPositions(db, channels);
  await storeBits(db, await frequentWords(db), { ids: messageIds, channels, positions, wordIds }, true);
}

/** Those of the words that have a bitmap. */
export async function wordsWithBitmaps(db: Kysely<Database>, wordIds: readonly number[]): Promise<number[]> {
  const { rows } = await sql<{ word_id: number }>`
    select word_id from message_frequent_words where word_id = any(${wordIds}::int[])`.execute(db);
  return rows.map((row) => row.word_id);
}

/** `bits` with only its first `kept` bits left on (a block of `size` bits). */
const firstBits = (bits: RawBuilder<unknown>, size: number, kept: RawBuilder<unknown> | number) =>
  sql`${bits} & ~((~ B'0'::bit(${sql.lit(size)})) >> ${kept})::bit varying`;

/**
 * The number of messages with id up to `upTo` holding any of the words (each with a bitmap), as
 * a subquery. The last block is masked at `upTo`, so messages added after a search's watermark
 * are left out.
 */
export function bitmapCount(wordIds: readonly number[], upTo: number): RawBuilder<string> {
  const last = Math.floor(upTo / BLOCK_BITS);
  // Ones at the positions 0..upTo of the last block (bit 0 is the block's first message id).
  const kept = (upTo % BLOCK_BITS) + 1;
  return sql<string>`(
    select coalesce(sum(bit_count(case when block = ${last}
             then ${firstBits(sql`bits`, BLOCK_BITS, kept)} else bits end)), 0)
    from (select block, bit_or(bits) as bits from message_word_bits
          where word_id = any(${wordIds}::int[]) and block <= ${last} group by block) b)`;
}

/**
 * The number of messages of the channel `channel` (a column) among its first `size` (a column)
 * holding any of the words (an int[]; those without a bitmap add nothing), as a subquery: a search's
 * channel sizes are read with its watermark, so the messages added since are left out.
 */
function channelBitmapCount(
  wordIds: RawBuilder<number[]>,
  channel: RawBuilder<unknown>,
  size: RawBuilder<unknown>,
): RawBuilder<string> {
  const last = sql`(${size} - 1) / ${sql.lit(CHANNEL_BLOCK_BITS)}`;
  const kept = sql`((${size} - 1) % ${sql.lit(CHANNEL_BLOCK_BITS)} + 1)`;
  return sql<string>`(
    select coalesce(sum(bit_count(case when block = ${last}
             then ${firstBits(sql`bits`, CHANNEL_BLOCK_BITS, kept)} else bits end)), 0)
    from (select block, bit_or(bits) as bits from message_channel_word_bits
          where channel_id = ${channel} and word_id = any(${wordIds}) and block <= ${last} and ${size} > 0
          group by block) b)`;
}

/** One channel's row of `channelBitmapCounts` (bigint counts arrive as strings). */
export interface ChannelBitmapCount {
  channel_id: string | number;
  bits: string | number;
  rare: string | number;
  long_with_bits: string | number;
  long_words: string | number;
}

/**
 * For each chosen channel (`channels`: a FROM item of rows (id, size), its size at the
 * watermark), a statement's rows: its messages with a frequent one of `words` among its first
 * `size` (`bits`), those holding only rare ones, read from the word index (one GIN scan of the
 * channel's key and the rare words' keys), and of the messages with a word too long for the
 * lexicon those holding a frequent word (counted in `bits`) and all of them, whose text
 * decides. Without a frequent word among `words`, the rare words' scan counts every match.
 */
export function channelBitmapCounts(
  words: RawBuilder<number[]>,
  channels: RawBuilder<unknown>,
  upTo: RawBuilder<unknown> | number,
): RawBuilder<ChannelBitmapCount> {
  return sql<ChannelBitmapCount>`
    with words as (
      select coalesce(array_agg(id) filter (where f.word_id is not null), '{}') as frequent,
             coalesce(array_agg(id) filter (where f.word_id is null), '{}') as rare
      from unnest(${words}) as id left join message_frequent_words f on f.word_id = id)
    select c.id as channel_id, ${channelBitmapCount(sql`words.frequent`, sql`c.id`, sql`c.size`)} as bits,
      (select count(*) from message_words w
       where w.channel_id = c.id and w.id <= ${upTo} and w.word_ids && words.rare
         and not w.word_ids && words.frequent and not w.word_ids @@ ${HAS_LONG_WORDS}) as rare,
      l.long_with_bits, l.long_words
    from words, ${channels} as c (id, size)
    cross join lateral (
      select count(*) filter (where w.word_ids && words.frequent) as long_with_bits, count(*) as long_words
      from message_words w where w.channel_id = c.id and w.word_ids @@ ${HAS_LONG_WORDS} and w.id <= ${upTo}) l`;
}
