import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../../../db/schema.ts';
import { foldText, type QueryNode } from './query-language.ts';

/**
 * PostgreSQL's word index (migration messenger/0009, docs/architecture.md "Search"): every
 * message's distinct words as ids of a lexicon, in a narrow table with an exact GIN index. It is
 * the only index of message text PostgreSQL keeps (the trigram index went in 0010).
 *
 * A word is a maximal run of letters, digits and combining marks of the folded text. A term made
 * only of such characters lies inside one word of any text that contains it, so a message
 * contains the term exactly when one of its words contains the term: the lexicon's words that
 * contain it (found through the lexicon's own trigram index, which is small) answer the term for
 * every message, with no row read. A term with punctuation inside is narrowed by its word pieces
 * and checked against the text. Words longer than MAX_WORD_LENGTH stay out of the lexicon; their
 * messages carry LONG_WORDS and are checked against their text.
 */

const WORD = /[\p{L}\p{N}\p{M}]+/gu;

/** Longer words are left out of the lexicon (a GIN key and a btree entry must stay small). */
export const MAX_WORD_LENGTH = 64;
/** The lexicon id of "this message has a word longer than MAX_WORD_LENGTH" (real ids start at 1). */
export const LONG_WORDS = 0;
/**
 * "Has a word too long for the lexicon" as a `query_int` literal, not a parameter: a generic
 * plan then knows how rare such messages are, and the partial index of migration
 * messenger/0015 (`where word_ids @@ '0'::query_int`) serves any plan.
 */
export const HAS_LONG_WORDS = sql`${sql.lit(String(LONG_WORDS))}::query_int`;
/** A term found inside more lexicon words than this is answered by reading rows instead. */
const MAX_WORDS_PER_TERM = 5000;
/** Lexicon ids kept in memory by a writer; beyond, the cache starts again (ids never change). */
const CACHED_WORDS = 500_000;

/**
 * The words of a folded text as the writer takes them: repeated words, and words too long for
 * the lexicon, still among them (one array a message: a Set of each message's words was a good
 * part of an ingest's garbage).
 */
export const messageWords = (folded: string): readonly string[] => folded.match(WORD) ?? [];

/** Ids each once, sorted and made distinct in place: the start of `ids`. */
function distinctIds(ids: Int32Array): Int32Array {
  ids.sort();
  let distinct = 0;
  for (let i = 0; i < ids.length; i++) if (i === 0 || ids[i] !== ids[i - 1]) ids[distinct++] = ids[i]!;
  return ids.subarray(0, distinct);
}

/**
 * A lexicon lookup one term needs: the words containing a piece of it, ending with it (a term's
 * first piece, followed by punctuation), starting with it (its last piece), or equal to it (a
 * piece between two punctuation marks).
 */
interface PieceLookup {
  piece: string;
  at: 'inside' | 'end' | 'start' | 'whole';
}

const lookupKey = (lookup: PieceLookup) => `${lookup.at}:${lookup.piece}`;

/**
 * The lookups whose words a message containing the term must have (all of them), and whether
 * having them is the whole answer: a term made only of word characters lies inside one word of
 * any text that contains it. A term split by punctuation (`billing42@globex.com`) is a chain of
 * words: the first ends the word it is in, the middle ones are words, the last starts one. A
 * term without a word character has no lookup.
 */
function termLookups(folded: string): { lookups: PieceLookup[]; exact: boolean } {
  const pieces = [...folded.matchAll(WORD)].map(([piece]) => piece);
  if (pieces.length === 1) return { lookups: [{ piece: pieces[0]!, at: 'inside' }], exact: pieces[0] === folded };
  const lookups = pieces.map((piece, i): PieceLookup => ({
    piece,
    at: i === 0 ? 'end' : i === pieces.length - 1 ? 'start' : 'whole',
  }));
  return { lookups, exact: false };
}

function lookupsOf(tree: QueryNode): PieceLookup[] {
  if (tree.type === 'term') return termLookups(foldText(tree.value)).lookups;
  if (tree.type === 'not') return lookupsOf(tree.child);
  return tree.children.flatMap(lookupsOf);
}

/**
 * A lookup's lexicon read: its words' ids, MAX_WORDS_PER_TERM + 1 at most. A piece inside words
 * shorter than a trigram has none for the trigram index to look up, which then reads all of it:
 * it is written so that no index applies, because the search's opening statement is prepared
 * (src/db/prepared-statements.ts) and its generic plan, the index scan of longer pieces, would
 * otherwise serve it too (2.9 ms where reading the lexicon takes 0.5 ms, at 11,646 words).
 */
function lexiconIds(lookup: PieceLookup): RawBuilder<number[]> {
  const { piece, at } = lookup;
  const condition =
    at === 'whole'
      ? sql`word = ${piece}`
      : at === 'inside' && piece.length < 3
        ? sql`strpos(word, ${piece}) > 0`
        : sql`word like ${at === 'inside' ? `%${piece}%` : at === 'end' ? `%${piece}` : `${piece}%`}`;
  return sql<number[]>`array(select id from message_lexicon where ${condition} limit ${MAX_WORDS_PER_TERM + 1})`;
}

/**
 * What the word index tells of a query: an intarray `query_int` over a message's word ids that
 * every matching message without LONG_WORDS satisfies, and whether it is exact (satisfied only
 * by matching messages) so that a count needs no text.
 */
export interface WordNarrowing {
  query: string;
  exact: boolean;
  /** Lexicon ids in the query: what checking one row against it, or one posting of it, costs. */
  ids: number;
  /** The ids when the query is exactly "has one of these words" (terms of one word piece, ORed). */
  anyOf: number[] | null;
}

/**
 * Lexicon ids up to which a query over the word index is read row by row (a count, or a channel
 * filter's rows) faster than the text is checked. intarray evaluates a `query_int` one id at a
 * time, each a binary search in the row's ids; at 1M messages, load 10: 1 id 0.67 s, 16 ids
 * 0.64 s, 64 ids 1.44 s, the 3,806 words holding `1` 40 s, against 1.77 s (0.85 s for `1`)
 * for `strpos` over every text (docs/performance.md, "Broad terms in many words").
 */
const SCANNED_WORDS = 32;

/**
 * Whether reading a query's matches through the word index costs less than checking the text.
 * A GIN bitmap scan looks at each of the query's ids for every posting it passes (the keys'
 * streams are merged one posting at a time), about share × messages × ids steps: a rare term
 * in many words stays cheap while that is below one step a message. A term in more words, or a
 * broad one, is checked against the text as `grep` would.
 */
export const wordsWorthReading = (words: WordNarrowing, share: number) =>
  words.ids <= SCANNED_WORDS || words.ids * share <= 1;

/** Ids per GIN scan when a disjunction of many words is read in chunks. */
export const CHUNK_WORDS = 8;
/** Ids up to which a disjunction is read in chunks; beyond, the text is checked (`1`: 3,806). */
const CHUNKED_WORDS = 512;

/**
 * How a count reads an exact narrowing: `query_int`s whose disjunction is the query, each read
 * through a GIN scan of its own (a BitmapOr), or null where checking the text costs less. A
 * disjunction of many words (`12` in 324 of the benchmark's numbers) is split into chunks of
 * CHUNK_WORDS ids, so each posting is compared with 8 ids rather than all of them: 0.5 s for
 * its count at 1M messages against 1.9 s for the text and 8.6 s for one query_int
 * (docs/performance.md, "Broad terms in many words"). `rowsFirst` (a channel filter whose rows
 * are read, a filter small against the query's share) takes no chunks: they were measured
 * without a channel filter only, and the text of a few channels is checked cheaply.
 */
export function countingWords(words: WordNarrowing, share: number, rowsFirst: boolean): string[] | null {
  if (!words.exact) return null;
  if (wordsWorthReading(words, share)) return [words.query];
  const ids = words.anyOf;
  if (rowsFirst || !ids || ids.length > CHUNKED_WORDS) return null;
  return Array.from({ length: Math.ceil(ids.length / CHUNK_WORDS) }, (_, i) => {
    return `(${ids.slice(i * CHUNK_WORDS, (i + 1) * CHUNK_WORDS).join('|')})`;
  });
}

/** An intarray `query_int` that is never true: no lexicon id is negative. */
const NO_WORD = '-1';

/**
 * The query over word ids, or null where the index cannot narrow (a term without a word
 * character, or in too many words; a NOT of what the index answers only roughly, as every
 * message lacking the rough answer's words lacks the term, but not the other way round).
 */
function narrowing(tree: QueryNode, ids: Map<string, number[] | null>): WordNarrowing | null {
  switch (tree.type) {
    case 'term': {
      const { lookups, exact } = termLookups(foldText(tree.value));
      const known = lookups.map((lookup) => ids.get(lookupKey(lookup)) ?? null).filter((found) => found !== null);
      if (known.length === 0) return null;
      const query = known.map((found) => (found.length ? `(${found.join('|')})` : NO_WORD)).join('&');
      return {
        query: `(${query})`,
        exact: exact && known.length === lookups.length,
        ids: known.reduce((sum, found) => sum + Math.max(1, found.length), 0),
        anyOf: exact && known.length === 1 && known[0]!.length > 0 ? known[0]! : null,
      };
    }
    case 'not': {
      const child = narrowing(tree.child, ids);
      return child?.exact ? { query: `!${child.query}`, exact: true, ids: child.ids, anyOf: null } : null;
    }
    case 'or': {
      const parts = tree.children.map((child) => narrowing(child, ids));
      if (parts.some((part) => part === null)) return null;
      const present = parts as WordNarrowing[];
      return {
        query: `(${present.map((p) => p.query).join('|')})`,
        exact: present.every((p) => p.exact),
        ids: present.reduce((sum, p) => sum + p.ids, 0),
        anyOf: present.every((p) => p.anyOf) ? [...new Set(present.flatMap((p) => p.anyOf!))] : null,
      };
    }
    case 'and': {
      const parts = tree.children.map((child) => narrowing(child, ids));
      const present = parts.filter((part) => part !== null);
      if (present.length === 0) return null;
      return {
        query: `(${present.map((p) => p.query).join('&')})`,
        exact: present.length === parts.length && present.every((p) => p.exact),
        ids: present.reduce((sum, p) => sum + p.ids, 0),
        anyOf: null,
      };
    }
  }
}

/** Whether a query is terms of one word piece each, ORed: exactly "has one of these words" once looked up. */
const onlyWords = (tree: QueryNode): boolean =>
  tree.type === 'term' ? termLookups(foldText(tree.value)).exact : tree.type === 'or' && tree.children.every(onlyWords);

/**
 * A query's lexicon reads as columns `l0`, `l1`, … (one per distinct lookup) that a search
 * selects beside its other opening reads, in one statement (search.repository.ts `opening`),
 * and the word index's narrowing from the row that holds them (null: the index cannot narrow
 * the query, rows are read). A lookup with more than MAX_WORDS_PER_TERM words (a short, common
 * fragment) narrows nothing: reading rows is the cheaper way. Pieces hold only word characters,
 * so none is a LIKE wildcard or escape; a piece shorter than a trigram is looked up by scanning
 * the lexicon, which is small beside the messages.
 */
export function lexiconRead(tree: QueryNode) {
  const lookups = [...new Map(lookupsOf(tree).map((lookup) => [lookupKey(lookup), lookup])).values()];
  return {
    columns: lookups.map((lookup, i) => sql`${lexiconIds(lookup)} as ${sql.ref(`l${i}`)}`),
    /**
     * When the query can only be "has one of these words" (terms of one word piece, ORed): its
     * words, from the columns of the row `alias` (they are its narrowing's `anyOf` whenever that
     * is not null).
     */
    anyOfColumns: (alias: string): RawBuilder<number[]> | null =>
      onlyWords(tree)
        ? sql<number[]>`(${sql.join(
            lookups.map((_, i) => sql.ref(`${alias}.l${i}`)),
            sql` || `,
          )})::int[]`
        : null,
    narrowing(row: Readonly<Record<string, unknown>>): WordNarrowing | null {
      const found = new Map(
        lookups.map((lookup, i) => {
          const ids = row[`l${i}`] as number[];
          return [lookupKey(lookup), ids.length > MAX_WORDS_PER_TERM ? null : ids.map(Number)] as const;
        }),
      );
      return narrowing(tree, found);
    },
  };
}

export type LexiconRead = ReturnType<typeof lexiconRead>;

/**
 * The messages a narrowing leaves as candidates for the exact check: those it finds, and those
 * with a word too long for the lexicon, which the index cannot vouch for.
 */
export const wordCandidates = (words: WordNarrowing) => `(${words.query})|${LONG_WORDS}`;

/** A message as the word index needs it. */
interface WordIndexRow {
  id: number;
  channel_id: number;
  text_folded: string;
}

/**
 * Writes the word index of the messages a transaction added. Ids of words this writer has
 * looked up are kept in memory; a word new to the lexicon is remembered only once its
 * transaction has committed (a rolled-back id would otherwise be reused by a later message).
 */
export function createWordIndexWriter() {
  let known = new Map<string, number>();

  // Two writers inserting the same new words wait on each other's uncommitted rows: in one order
  // (sorted), the one that got a word first is never waiting for a word the other holds.
  async function lexiconOf(db: Kysely<Database>, words: Set<string>, added: Map<string, number>) {
    if (words.size === 0) return;
    const missing = [...words];
    const { rows: created } = await sql<{ id: number; word: string }>`
      insert into message_lexicon (word) select word from unnest(${missing}::text[]) as word order by word
      on conflict (word) do nothing returning id, word`.execute(db);
    for (const row of created) added.set(row.word, Number(row.id));
    const existing = missing.filter((word) => !added.has(word));
    if (existing.length === 0) return;
    // Looked up on the unique B-tree: the planner took the lexicon's trigram GIN index for this
    // equality (pg_trgm answers `=` since PostgreSQL 14), and 10,000 short words such as numbers
    // share trigrams with most of the lexicon: one lookup ran for minutes. A GIN index is only
    // read through bitmap scans, so leaving those out for this statement leaves the B-tree.
    await sql`set local enable_bitmapscan = off`.execute(db);
    const { rows } = await sql<{ id: number; word: string }>`
      select id, word from message_lexicon where word = any(${existing}::text[])`.execute(db);
    await sql`reset enable_bitmapscan`.execute(db);
    for (const row of rows) added.set(row.word, Number(row.id));
  }

  /**
   * Each message's word ids (its `messageWords`), each once, as an intarray literal
   * (`{3,17,42}`, one flat string: appending left a rope of small strings a message) and as
   * numbers (`ids(i)`, message i's, views of one buffer for the whole group: a typed array a
   * message was a million small allocations a million messages), LONG_WORDS among them for a
   * word too long for the lexicon; `commit` makes the new
   * lexicon entries known once `db`'s transaction has committed. With `pause`, the event loop
   * gets a turn every `every` messages (a writer's transaction in flight goes on meanwhile).
   */
  async function wordIdLists(
    db: Kysely<Database>,
    perMessage: ReadonlyArray<readonly string[]>,
    pause?: { every: number; breathe: () => Promise<void> },
  ): Promise<{ lists: string[]; ids: (message: number) => Int32Array; commit: () => void }> {
    const added = new Map<string, number>();
    const missing = new Set<string>();
    for (const words of perMessage) {
      for (const word of words) if (word.length <= MAX_WORD_LENGTH && !known.has(word)) missing.add(word);
    }
    await lexiconOf(db, missing, added);
    // One buffer of ids for every message, sorted in place (numerically, as typed arrays sort).
    let ids = new Int32Array(256);
    let flat = new Int32Array(1 << 16);
    const offsets = new Int32Array(perMessage.length + 1);
    const lists: string[] = [];
    for (const words of perMessage) {
      if (pause && lists.length > 0 && lists.length % pause.every === 0) await pause.breathe();
      if (ids.length <= words.length) ids = new Int32Array(2 * words.length + 1);
      let count = 0;
      let long = false;
      for (const word of words) {
        if (word.length > MAX_WORD_LENGTH) long = true;
        else ids[count++] = known.get(word) ?? added.get(word)!;
      }
      if (long) ids[count++] = LONG_WORDS;
      const distinct = distinctIds(ids.subarray(0, count));
      const at = offsets[lists.length]!;
      if (at + distinct.length > flat.length) {
        const grown = new Int32Array(2 * (at + distinct.length));
        grown.set(flat.subarray(0, at));
        flat = grown;
      }
      flat.set(distinct, at);
      offsets[lists.length + 1] = at + distinct.length;
      lists.push(`{${distinct.join(',')}}`);
    }
    return {
      lists,
      ids: (message) => flat.subarray(offsets[message], offsets[message + 1]),
      commit: () => {
        if (known.size + added.size > CACHED_WORDS) known = new Map();
        for (const [word, id] of added) known.set(word, id);
      },
    };
  }

  return {
    wordIdLists,

    /**
     * Indexes the messages with id in (aboveId, upToId], read back from the table: the backfill
     * of migration messenger/0009 (writers index what they add from their own copy, through
     * `wordIdLists`). `commit` makes the new lexicon entries known once `db`'s transaction has
     * committed.
     */
    async index(db: Kysely<Database>, aboveId: number, upToId: number): Promise<{ commit: () => void }> {
      const { rows } = await sql<WordIndexRow>`
        select id, channel_id, text_folded from messages where id > ${aboveId} and id <= ${upToId}`.execute(db);
      const { lists, commit } = await wordIdLists(
        db,
        rows.map((row) => messageWords(row.text_folded)),
      );
      if (rows.length > 0) {
        await sql`insert into message_words (id, channel_id, word_ids)
            select id, channel_id, word_ids::int[]
            from unnest(${rows.map((row) => row.id)}::bigint[], ${rows.map((row) => row.channel_id)}::bigint[], ${lists}::text[])
              as t (id, channel_id, word_ids)`.execute(db);
      }
      return { commit };
    },
  };
}

export type WordIndexWriter = ReturnType<typeof createWordIndexWriter>;
