import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../../../db/schema.ts';

/**
 * PostgreSQL: bitmaps of the messages holding each frequent word (migration messenger/0012,
 * docs/architecture.md "Search"). A word in a large share of the messages (`with`, in 39% of
 * them) is counted through the word index by reading one narrow row per match: 390k rows, a
 * parallel scan of all of message_words, as long as `grep -i` over every text. Its bitmap, one
 * bit a message id in blocks of BLOCK_BITS ids, is counted with `bit_count` in under a
 * millisecond. Words become frequent by PostgreSQL's own statistics of `message_words.word_ids`
 * (ANALYZE's most common elements, refreshed by autovacuum), so no count is kept per word; a
 * word's bitmap is built from the word index when it becomes frequent, and the message writer
 * sets the bits of every message it adds in the same transaction, so that a snapshot sees the
 * bitmaps and the messages alike. Messages are never deleted, so bits are never cleared.
 */

/**
 * Message ids a bitmap row covers: 1 KB of bits, below the size PostgreSQL compresses or moves
 * out of line. A write rewrites the rows of the blocks its messages fall in, one per frequent
 * word: a transaction of one message rewrites about 40 rows (the words of a message), so a row
 * is kept small; counting `with` at 1M messages ORs 123 of them.
 */
const BLOCK_BITS = 1 << 13;
/** Words in at least this share of the messages (by the statistics' estimate) get a bitmap. */
const FREQUENT_SHARE = 0.01;

const BLOCK_BYTES = BLOCK_BITS / 8;

/**
 * ORs the bits of messages into the stored bitmaps of `words`, each (word, block) row created
 * when missing: `wordIds(i)` are the lexicon ids of the message `messageIds[i]`. The bits are
 * set in one array a word over the blocks the messages span (a writer's messages have
 * consecutive ids), the words found through an array indexed by lexicon id: a Map of bitmaps
 * per word and block cost an ingest of 50,000 messages a second of CPU.
 */
async function storeBits(
  db: Kysely<Database>,
  words: readonly number[],
  messageIds: readonly number[],
  wordIds: (i: number) => ArrayLike<number>,
) {
  if (words.length === 0 || messageIds.length === 0) return;
  let low = messageIds[0]!;
  let high = low;
  for (const id of messageIds) {
    low = Math.min(low, id);
    high = Math.max(high, id);
  }
  const firstBlock = Math.floor(low / BLOCK_BITS);
  const blockCount = Math.floor(high / BLOCK_BITS) - firstBlock + 1;
  const base = firstBlock * BLOCK_BITS;
  const slotOf = new Int32Array(Math.max(...words) + 1).fill(-1);
  words.forEach((word, slot) => (slotOf[word] = slot));
  const maps = words.map(() => new Uint8Array(blockCount * BLOCK_BYTES));
  messageIds.forEach((id, i) => {
    const at = id - base;
    const byte = at >> 3;
    const bit = 0x80 >> (at & 7);
    const ids = wordIds(i);
    for (let w = 0; w < ids.length; w++) {
      const slot = ids[w]! < slotOf.length ? slotOf[ids[w]!]! : -1;
      if (slot >= 0) maps[slot]![byte]! |= bit;
    }
  });
  const rowWords: number[] = [];
  const rowBlocks: number[] = [];
  const hex: string[] = [];
  words.forEach((word, slot) => {
    for (let block = 0; block < blockCount; block++) {
      const bits = maps[slot]!.subarray(block * BLOCK_BYTES, (block + 1) * BLOCK_BYTES);
      if (!bits.some((byte) => byte !== 0)) continue;
      rowWords.push(word);
      rowBlocks.push(firstBlock + block);
      hex.push(Buffer.from(bits.buffer, bits.byteOffset, bits.byteLength).toString('hex'));
    }
  });
  if (rowWords.length === 0) return;
  await sql`insert into message_word_bits (word_id, block, bits)
      select word_id, block, ('x' || hex)::bit varying
      from unnest(${rowWords}::int[], ${rowBlocks}::int[], ${hex}::text[]) as t (word_id, block, hex)
      on conflict (word_id, block) do update set bits = message_word_bits.bits | excluded.bits`.execute(db);
}

/**
 * The words with a bitmap, after giving one to each word the statistics now find frequent: its
 * messages so far are read from the word index (those `db`'s transaction added among them).
 * Run by message writers, which take turns (message-transactions.ts): no message is added
 * between a word's reading and the next writer's bits.
 */
export async function frequentWords(db: Kysely<Database>): Promise<number[]> {
  const { rows: fresh } = await sql<{ word_id: number }>`
    insert into message_frequent_words (word_id)
    select distinct e from pg_stats s, unnest(s.most_common_elems::text::int[], s.most_common_elem_freqs) as t (e, share)
    where s.schemaname = current_schema() and s.tablename = 'message_words' and s.attname = 'word_ids'
      and e > 0 and share >= ${FREQUENT_SHARE}
    on conflict (word_id) do nothing returning word_id`.execute(db);
  for (const { word_id } of fresh) {
    const { rows } = await sql<{ id: string }>`
      select id from message_words where word_ids @@ ${String(word_id)}::query_int`.execute(db);
    const word = [word_id];
    await storeBits(
      db,
      word,
      rows.map((row) => Number(row.id)),
      () => word,
    );
  }
  const { rows } = await sql<{ word_id: number }>`select word_id from message_frequent_words`.execute(db);
  return rows.map((row) => row.word_id);
}

/**
 * Sets the bits of messages a writer's transaction added: `wordIds(i)` are the lexicon ids of
 * the message `messageIds[i]`.
 */
export async function addWordBits(
  db: Kysely<Database>,
  messageIds: readonly number[],
  wordIds: (i: number) => ArrayLike<number>,
): Promise<void> {
  if (messageIds.length === 0) return;
  await storeBits(db, await frequentWords(db), messageIds, wordIds);
}

/** Those of the words that have a bitmap. */
export async function wordsWithBitmaps(db: Kysely<Database>, wordIds: readonly number[]): Promise<number[]> {
  const { rows } = await sql<{ word_id: number }>`
    select word_id from message_frequent_words where word_id = any(${wordIds}::int[])`.execute(db);
  return rows.map((row) => row.word_id);
}

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
             then bits & ~((~ B'0'::bit(${sql.lit(BLOCK_BITS)})) >> ${kept})::bit varying else bits end)), 0)
    from (select block, bit_or(bits) as bits from message_word_bits
          where word_id = any(${wordIds}::int[]) and block <= ${last} group by block) b)`;
}
