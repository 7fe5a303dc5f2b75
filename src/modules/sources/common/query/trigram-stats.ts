import type { Kysely } from 'kysely';
import type { Database } from '../../../../db/schema.ts';

/** Estimated share (0–1) of the messages whose folded text contains a trigram. */
export type TrigramRarity = (trigram: string) => number;

export interface CorpusEstimate {
  rarity: TrigramRarity;
  /** Messages in the store when the estimate was made (the highest message id). */
  messages: number;
}

/** Messages read to estimate trigram frequencies: enough to rank common trigrams reliably. */
const SAMPLE_SIZE = 3000;
/** The estimate is made again once the corpus has grown by this factor. */
const REFRESH_GROWTH = 1.2;

/** Every trigram of a text (three code points, as the FTS5 trigram tokenizer counts) with its position. */
export function trigramsAt(folded: string): { trigram: string; position: number }[] {
  const chars = [...folded];
  const found: { trigram: string; position: number }[] = [];
  for (let i = 0; i + 3 <= chars.length; i++)
    found.push({ trigram: chars[i]! + chars[i + 1]! + chars[i + 2]!, position: i });
  return found;
}

const distinctTrigrams = (folded: string) => new Set(trigramsAt(folded).map((t) => t.trigram));

/**
 * Which trigrams of a term are rare, so that a search asks the trigram index for the few rare
 * ones and checks the whole term only on what they find (message-search.sql.ts). Neither
 * engine can say this cheaply (FTS5's vocabulary table walks every doclist), so it is
 * estimated from a random sample of messages, once per process and again when the corpus has
 * grown. A wrong estimate costs speed, never results: every match is checked exactly.
 */
export function createTrigramStats(db: Kysely<Database>) {
  let current: { estimate: CorpusEstimate; builtAt: number } | null = null;
  let building: Promise<CorpusEstimate> | null = null;

  async function sampleTexts(maxId: number): Promise<string[]> {
    let query = db.selectFrom('messages').select('text_folded').where('id', '<=', maxId);
    if (maxId > SAMPLE_SIZE) {
      const ids = new Set<number>();
      while (ids.size < SAMPLE_SIZE) ids.add(1 + Math.floor(Math.random() * maxId));
      query = query.where('id', 'in', [...ids]);
    }
    return (await query.execute()).map((row) => row.text_folded);
  }

  async function build(maxId: number): Promise<CorpusEstimate> {
    const texts = await sampleTexts(maxId);
    const counts = new Map<string, number>();
    for (const text of texts) {
      for (const trigram of distinctTrigrams(text)) counts.set(trigram, (counts.get(trigram) ?? 0) + 1);
    }
    // A trigram the sample never saw is rarer than one it saw once.
    const size = texts.length + 1;
    const estimate = { rarity: (trigram: string) => ((counts.get(trigram) ?? 0) + 0.5) / size, messages: maxId };
    current = { estimate, builtAt: maxId };
    return estimate;
  }

  return {
    /** The estimate for a corpus whose highest message id is `maxId`. */
    async estimate(maxId: number): Promise<CorpusEstimate> {
      if (current && maxId <= current.builtAt * REFRESH_GROWTH) return current.estimate;
      building ??= build(maxId).finally(() => (building = null));
      return building;
    },
  };
}

export type TrigramStats = ReturnType<typeof createTrigramStats>;
