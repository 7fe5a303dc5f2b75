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

/** Message ids a bitmap row covers: 4 KB of bits, stored inline (storage plain), two rows a page. */
const BLOCK_BITS = 1 << 15;
/** Words in at least this share of the messages (by the statistics' estimate) get a bitmap. */
const FREQUENT_SHARE = 0.01;

/** The set bits of message ids, by word, then by block. */
type Bits = Map<number, Map<number, Uint8Array>>;

function setBit(bits: Bits, word: number, messageId: number) {
  let blocks = bits.get(word);
  if (!blocks) bits.set(word, (blocks = new Map()));
  const block = Math.floor(messageId / BLOCK_BITS);
  let map = blocks.get(block);
  if (!map) blocks.set(block, (map = new Uint8Array(BLOCK_BITS / 8)));
  const at = messageId % BLOCK_BITS;
  map[at >> 3]! |= 0x80 >> (at & 7);
}

/** ORs the bits into the stored bitmaps, each (word, block) row created when missing. */
async function storeBits(db: Kysely<Database>, bits: Bits) {
  const words: number[] = [];
  const blocks: number[] = [];
  const hex: string[] = [];
  for (const [word, byBlock] of bits) {
    for (const [block, map] of byBlock) {
      words.push(word);
      blocks.push(block);
      hex.push(Buffer.from(map.buffer, map.byteOffset, map.byteLength).toString('hex'));
    }
  }
  if (words.length === 0) return;
  await sql`insert into message_word_bits (word_id, block, bits)
      select word_id, block, ('x' || hex)::bit varying
      from unnest(${words}::int[], ${blocks}::int[], ${hex}::text[]) as t (word_id, block, hex)
      on conflict (word_id, block) do update set bits = message_word_bits.bits | excluded.bits`.execute(db);
}

/**
 * The words with a bitmap, after giving one to each word the statistics now find frequent: its
 * messages so far are read from the word index (those `db`'s transaction added among them).
 * Run by message writers, which take turns (message-transactions.ts): no message is added
 * between a word's reading and the next writer's bits.
 */
export async function frequentWords(db: Kysely<Database>): Promise<Set<number>> {
  const { rows: fresh } = await sql<{ word_id: number }>`
    insert into message_frequent_words (word_id)
    select distinct e from pg_stats s, unnest(s.most_common_elems::text::int[], s.most_common_elem_freqs) as t (e, share)
    where s.schemaname = current_schema() and s.tablename = 'message_words' and s.attname = 'word_ids'
      and e > 0 and share >= ${FREQUENT_SHARE}
    on conflict (word_id) do nothing returning word_id`.execute(db);
  for (const { word_id } of fresh) {
    const { rows } = await sql<{ id: string }>`
      select id from message_words where word_ids @@ ${String(word_id)}::query_int`.execute(db);
    const bits: Bits = new Map();
    for (const row of rows) setBit(bits, word_id, Number(row.id));
    await storeBits(db, bits);
  }
  const { rows } = await sql<{ word_id: number }>`select word_id from message_frequent_words`.execute(db);
  return new Set(rows.map((row) => row.word_id));
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
  const frequent = await frequentWords(db);
  if (frequent.size === 0) return;
  const bits: Bits = new Map();
  messageIds.forEach((id, i) => {
    const words = wordIds(i);
    for (let w = 0; w < words.length; w++) if (frequent.has(words[w]!)) setBit(bits, words[w]!, id);
  });
  await storeBits(db, bits);
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
