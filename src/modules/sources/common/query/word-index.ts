import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../../db/schema.ts';
import { foldText, MIN_INDEXED_TERM_LENGTH, type QueryNode } from './query-language.ts';

/**
 * PostgreSQL's word index (migration messenger/0009, docs/architecture.md "Search"): every
 * message's distinct words as ids of a lexicon, in a narrow table with an exact GIN index.
 *
 * A word is a maximal run of letters, digits and combining marks of the folded text. A term made
 * only of such characters lies inside one word of any text that contains it, so a message
 * contains the term exactly when one of its words contains the term: the lexicon's words that
 * contain it (found through the lexicon's own trigram index, which is small) answer the term for
 * every message, with no row read. Words longer than MAX_WORD_LENGTH stay out of the lexicon;
 * their messages carry LONG_WORDS and are checked against their text.
 */

const WORD = /[\p{L}\p{N}\p{M}]+/gu;
const ONLY_WORD_CHARACTERS = /^[\p{L}\p{N}\p{M}]+$/u;

/** Longer words are left out of the lexicon (a GIN key and a btree entry must stay small). */
export const MAX_WORD_LENGTH = 64;
/** The lexicon id of "this message has a word longer than MAX_WORD_LENGTH" (real ids start at 1). */
export const LONG_WORDS = 0;
/** A term found inside more lexicon words than this is answered by reading rows instead. */
const MAX_WORDS_PER_TERM = 5000;
/** Lexicon ids kept in memory by a writer; beyond, the cache starts again (ids never change). */
const CACHED_WORDS = 500_000;

/** The distinct words of a folded text, and whether one of them is too long for the lexicon. */
export function messageWords(folded: string): { words: Set<string>; long: boolean } {
  const words = new Set<string>();
  let long = false;
  for (const [word] of folded.matchAll(WORD)) {
    if (word.length > MAX_WORD_LENGTH) long = true;
    else words.add(word);
  }
  return { words, long };
}

/** The folded terms of a query the word index can answer, or null when one of them cannot be. */
export function wordTerms(tree: QueryNode): string[] | null {
  const terms = new Set<string>();
  const visit = (node: QueryNode): boolean => {
    if (node.type === 'term') {
      const folded = foldText(node.value);
      if (!ONLY_WORD_CHARACTERS.test(folded) || [...folded].length < MIN_INDEXED_TERM_LENGTH) return false;
      terms.add(folded);
      return true;
    }
    if (node.type === 'not') return visit(node.child);
    return node.children.every(visit);
  };
  return visit(tree) ? [...terms] : null;
}

/** An intarray `query_int` that is never true: no lexicon id is negative. */
const NO_WORD = '-1';

/**
 * The query as an intarray `query_int` over a message's word ids, given the lexicon ids of the
 * words containing each term; exact for the messages without LONG_WORDS.
 */
export function wordQuery(tree: QueryNode, idsOfTerm: Map<string, number[]>): string {
  switch (tree.type) {
    case 'term': {
      const ids = idsOfTerm.get(foldText(tree.value)) ?? [];
      return ids.length ? `(${ids.join('|')})` : NO_WORD;
    }
    case 'not':
      return `!(${wordQuery(tree.child, idsOfTerm)})`;
    default:
      return `(${tree.children.map((child) => wordQuery(child, idsOfTerm)).join(tree.type === 'and' ? '&' : '|')})`;
  }
}

/**
 * The lexicon ids of the words containing each term, or null when a term is in too many words
 * for the index to be the cheaper way (a short, common fragment).
 */
export async function lexiconIds(db: Kysely<Database>, terms: string[]): Promise<Map<string, number[]> | null> {
  const found = new Map<string, number[]>();
  for (const term of terms) {
    const pattern = `%${term}%`;
    const { rows } = await sql<{ id: number }>`
      select id from message_lexicon where word like ${pattern} limit ${MAX_WORDS_PER_TERM + 1}`.execute(db);
    if (rows.length > MAX_WORDS_PER_TERM) return null;
    found.set(
      term,
      rows.map((row) => Number(row.id)),
    );
  }
  return found;
}

/**
 * Writes the word index of the messages a transaction added. Ids of words this writer has
 * looked up are kept in memory; a word new to the lexicon is remembered only once its
 * transaction has committed (a rolled-back id would otherwise be reused by a later message).
 */
export function createWordIndexWriter() {
  let known = new Map<string, number>();

  async function lexiconOf(db: Kysely<Database>, words: Set<string>, added: Map<string, number>) {
    const missing = [...words].filter((word) => !known.has(word));
    if (missing.length === 0) return;
    await sql`insert into message_lexicon (word) select unnest(${missing}::text[]) on conflict (word) do nothing`.execute(
      db,
    );
    const { rows } = await sql<{ id: number; word: string }>`
      select id, word from message_lexicon where word = any(${missing}::text[])`.execute(db);
    for (const row of rows) added.set(row.word, Number(row.id));
  }

  return {
    /**
     * Indexes the messages with id in (aboveId, upToId] (a writer's own, under the writers' lock);
     * `commit` makes the new lexicon entries known once the transaction has committed.
     */
    async index(db: Kysely<Database>, aboveId: number, upToId?: number): Promise<{ commit: () => void }> {
      const { rows } = await sql<{ id: number; channel_id: number; text_folded: string }>`
        select id, channel_id, text_folded from messages
        where id > ${aboveId} ${upToId === undefined ? sql`` : sql`and id <= ${upToId}`}`.execute(db);
      const added = new Map<string, number>();
      const perMessage = rows.map((row) => messageWords(row.text_folded));
      const all = new Set<string>();
      for (const { words } of perMessage) for (const word of words) all.add(word);
      await lexiconOf(db, all, added);
      const idOf = (word: string) => known.get(word) ?? added.get(word)!;
      const wordIds = perMessage.map(({ words, long }) => {
        const ids = [...words].map(idOf);
        if (long) ids.push(LONG_WORDS);
        return `{${ids.sort((a, b) => a - b).join(',')}}`;
      });
      if (rows.length > 0) {
        await sql`insert into message_words (id, channel_id, word_ids)
          select id, channel_id, word_ids::int[]
          from unnest(${rows.map((row) => row.id)}::bigint[], ${rows.map((row) => row.channel_id)}::bigint[], ${wordIds}::text[])
            as t (id, channel_id, word_ids)`.execute(db);
      }
      return {
        commit: () => {
          if (known.size + added.size > CACHED_WORDS) known = new Map();
          for (const [word, id] of added) known.set(word, id);
        },
      };
    },
  };
}

export type WordIndexWriter = ReturnType<typeof createWordIndexWriter>;
