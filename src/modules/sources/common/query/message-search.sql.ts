import { sql, type RawBuilder } from 'kysely';
import type { Engine } from '../../../../db/store.ts';
import { foldText, MIN_INDEXED_TERM_LENGTH, type QueryNode } from './query-language.ts';
import { trigramsAt, type TrigramRarity } from './trigram-stats.ts';
import { wordCandidates, wordsWorthReading, type WordNarrowing } from './word-index.ts';

/**
 * Compiles a query tree into a SQL predicate over `messages m`, one implementation per engine
 * (docs/architecture.md "Search"). The predicate has two parts:
 *
 * - the exact check: every term is a substring test on the folded text (`GLOB` / `strpos`),
 *   the semantics of `matchesFolded`, so both engines find exactly the same messages;
 * - a narrowing condition an index answers (FTS5's trigrams on SQLite, the word index on
 *   PostgreSQL), which may find more than the exact check keeps, never less.
 *
 * The narrowing asks the index for only the rarest trigrams of the most selective term, not
 * for every trigram of every term: a term like `billing42@globex.com` has 18 trigrams, and
 * `.co`, `com`, `ing` are in most messages, so intersecting all of them reads most of the
 * index to confirm a handful of rows (docs/performance.md, "Messenger search").
 */
export interface SearchHints {
  /** Estimated share of messages containing a trigram; without it, trigrams spread over the term are used. */
  rarity?: TrigramRarity;
  /** Check the rows directly instead of asking the index (a channel filter that leaves few rows). */
  withoutIndex?: boolean;
  /** PostgreSQL: the word index's narrowing of the query (word-index.ts); without it, rows are read. */
  words?: WordNarrowing | null;
}

export type PredicateCompiler = (tree: QueryNode, hints?: SearchHints) => RawBuilder<boolean>;

export interface CompiledMatch {
  /** The exact check over `m.text_folded`: alone, it is the whole semantics of the query. */
  exact: RawBuilder<boolean>;
  /**
   * What the index is asked (a superset of the matches), or null when it cannot narrow the
   * query: SQLite an FTS5 MATCH expression for `messages_fts`, PostgreSQL a condition on `m`
   * that the word index answers.
   */
  narrowing: { engine: 'sqlite'; match: string } | { engine: 'postgres'; condition: RawBuilder<boolean> } | null;
  /**
   * The narrowing finds exactly the matches (SQLite, a query the positional trigram index answers
   * whole): counts need no row, and the exact check only confirms rows read anyway.
   */
  complete: boolean;
  /** Expected share of the messages the narrowing returns (1 without one). */
  share: number;
}

/** Trigrams asked of the index per term: more narrows little, each costs a doclist read. */
const TRIGRAMS_PER_TERM = 3;

/** What the index is asked for a subtree, and the share of messages it is expected to return. */
interface Narrowing<T> {
  ask: T;
  share: number;
}

/**
 * Up to `count` distinct trigrams of a term that `usable` allows, rarest first, each at least
 * `spacing` characters from the ones already picked (see the engines' narrowings for why).
 */
function rarestTrigrams(
  folded: string,
  rarity: TrigramRarity | undefined,
  usable: (trigram: string) => boolean,
  count: number,
  spacing: number,
) {
  const candidates = trigramsAt(folded).filter((candidate) => usable(candidate.trigram));
  // Without estimates every trigram counts as common, and the sort keeps the term's order.
  const ranked = candidates
    .map((c) => ({ ...c, share: rarity ? rarity(c.trigram) : 1 }))
    .sort((a, b) => a.share - b.share);
  const picked: typeof ranked = [];
  for (const candidate of ranked) {
    if (picked.length === count) break;
    if (picked.every((p) => Math.abs(p.position - candidate.position) >= spacing && p.trigram !== candidate.trigram))
      picked.push(candidate);
  }
  return picked;
}

/**
 * The narrowing of a subtree, built from per-term narrowings: an AND is narrowed by its most
 * selective positive child (the others are left to the exact check), an OR only when every
 * child can be, a NOT never (the index cannot list what lacks a term).
 */
function narrowTree<T>(
  node: QueryNode,
  term: (folded: string) => Narrowing<T> | null,
  or: (parts: T[]) => T,
): Narrowing<T> | null {
  switch (node.type) {
    case 'term': {
      const folded = foldText(node.value);
      return [...folded].length >= MIN_INDEXED_TERM_LENGTH ? term(folded) : null;
    }
    case 'not':
      return null;
    case 'or': {
      const parts = node.children.map((child) => narrowTree(child, term, or));
      if (parts.some((part) => part === null)) return null;
      const present = parts as Narrowing<T>[];
      return {
        ask: or(present.map((part) => part.ask)),
        share: Math.min(
          1,
          present.reduce((sum, part) => sum + part.share, 0),
        ),
      };
    }
    case 'and': {
      const parts = node.children.filter((child) => child.type !== 'not').map((child) => narrowTree(child, term, or));
      return parts.reduce<Narrowing<T> | null>(
        (best, part) => (part && (!best || part.share < best.share) ? part : best),
        null,
      );
    }
  }
}

const joinWith = (parts: RawBuilder<unknown>[], operator: 'and' | 'or') =>
  sql<boolean>`(${sql.join(parts, operator === 'and' ? sql` and ` : sql` or `)})`;

function exactCheck(node: QueryNode, contains: (folded: string) => RawBuilder<boolean>): RawBuilder<boolean> {
  switch (node.type) {
    case 'term':
      return contains(foldText(node.value));
    case 'not':
      return sql<boolean>`not ${exactCheck(node.child, contains)}`;
    default:
      return joinWith(
        node.children.map((child) => exactCheck(child, contains)),
        node.type,
      );
  }
}

// --- SQLite: FTS5 with the trigram tokenizer indexes every three characters of text_folded.

const ftsPhrase = (text: string) => `"${text.replaceAll('"', '""')}"`;

function sqliteNarrowing(tree: QueryNode, rarity: TrigramRarity | undefined): Narrowing<string> | null {
  return narrowTree<string>(
    tree,
    (folded) => {
      // Overlapping trigrams are welcome here: across punctuation they pin down the rare part
      // of a term (`42@`, `2@g` of `billing42@globex.com`: 2.8 ms in the benchmark, 7.3 ms when
      // the picks had to be spread apart).
      const picked = rarestTrigrams(folded, rarity, () => true, TRIGRAMS_PER_TERM, 1);
      return { ask: `(${picked.map((p) => ftsPhrase(p.trigram)).join(' AND ')})`, share: picked[0]!.share };
    },
    (parts) => `(${parts.join(' OR ')})`,
  );
}

/**
 * The FTS5 query that finds exactly the messages the query matches, or null when the index
 * cannot say. The index keeps every trigram's positions (migration messenger/0003), so a term of three
 * or more characters is a phrase of its trigrams, and the phrase matches where the term is a
 * substring of the folded text: the semantics of the exact check, answered by the index alone.
 * Shorter terms have no trigram, a NOT needs something to subtract from (FTS5's NOT is binary),
 * and a NUL cannot be written in an FTS5 query: those are checked row by row.
 *
 * The cost is the positions read: one entry per message holding each of the terms' trigrams,
 * counted from the estimated shares (one unit = every message once).
 */
function sqliteWholeQuery(node: QueryNode, rarity: TrigramRarity | undefined): { ask: string; cost: number } | null {
  switch (node.type) {
    case 'term': {
      const folded = foldText(node.value);
      if ([...folded].length < MIN_INDEXED_TERM_LENGTH || folded.includes('\0')) return null;
      const trigrams = new Set(trigramsAt(folded).map((t) => t.trigram));
      return {
        ask: ftsPhrase(folded),
        cost: [...trigrams].reduce((sum, trigram) => sum + (rarity ? rarity(trigram) : 1), 0),
      };
    }
    case 'not':
      return null;
    case 'or': {
      const parts = node.children.map((child) => sqliteWholeQuery(child, rarity));
      if (parts.some((part) => part === null)) return null;
      const present = parts as { ask: string; cost: number }[];
      return { ask: `(${present.map((p) => p.ask).join(' OR ')})`, cost: present.reduce((sum, p) => sum + p.cost, 0) };
    }
    case 'and': {
      const positives = node.children
        .filter((child) => child.type !== 'not')
        .map((child) => sqliteWholeQuery(child, rarity));
      const negatives = node.children.flatMap((child) =>
        child.type === 'not' ? [sqliteWholeQuery(child.child, rarity)] : [],
      );
      const parts = [...positives, ...negatives];
      if (positives.length === 0 || parts.some((part) => part === null)) return null;
      const ask = (list: typeof parts) => list.map((p) => p!.ask);
      const excluded = ask(negatives)
        .map((n) => ` NOT ${n}`)
        .join('');
      return {
        ask: `((${ask(positives).join(' AND ')})${excluded})`,
        cost: parts.reduce((sum, p) => sum + p!.cost, 0),
      };
    }
  }
}

/**
 * Reading a candidate row to check it costs about as much as reading 40 position entries
 * (measured at 1M messages: 1.2 µs against 0.03 µs), so a query goes to the index whole when
 * its positions cost less than checking the rows its rarest trigrams leave.
 */
const ROW_CHECK_COST = 40;

/**
 * A GLOB pattern that holds where `folded` is a substring: its metacharacters each in a bracket
 * of their own. GLOB scans for the first character and compares from there, about twice as fast
 * as `instr` (which counts characters as it goes): 4.4 against 8.6 ms over 10,000 messages
 * (docs/performance.md, "Messenger search"). Stored texts hold no NUL (the ingest removes it,
 * PostgreSQL could not store it) and a query cannot, so GLOB's C string ends where the text does.
 */
const containsGlob = (folded: string) => `*${folded.replace(/[*?[]/g, (c) => `[${c}]`)}*`;

function sqliteMatch(tree: QueryNode, hints: SearchHints): CompiledMatch {
  const exact = exactCheck(tree, (folded) => sql<boolean>`m.text_folded glob ${containsGlob(folded)}`);
  if (hints.withoutIndex) return { exact, narrowing: null, complete: false, share: 1 };
  const narrowing = sqliteNarrowing(tree, hints.rarity);
  const whole = sqliteWholeQuery(tree, hints.rarity);
  const share = narrowing?.share ?? 1;
  if (whole && whole.cost <= share * ROW_CHECK_COST)
    return { exact, narrowing: { engine: 'sqlite', match: whole.ask }, complete: true, share };
  if (!narrowing) return { exact, narrowing: null, complete: false, share: 1 };
  return { exact, narrowing: { engine: 'sqlite', match: narrowing.ask }, complete: false, share };
}

// --- PostgreSQL: the word index (word-index.ts) narrows; its share is estimated from the word
// trigrams of the terms, as the words they lie in are about as rare as those trigrams.

const WORD_TRIGRAM = /^[\p{L}\p{N}]{3}$/u;

/** Above this expected share of candidates a PostgreSQL search reads the table without the index. */
const POSTGRES_SCAN_SHARE = 0.1;

function postgresShare(tree: QueryNode, rarity: TrigramRarity | undefined): number {
  const narrowed = narrowTree<null>(
    tree,
    (folded) => {
      const picked = rarestTrigrams(folded, rarity, (trigram) => WORD_TRIGRAM.test(trigram), 1, 1);
      return picked.length ? { ask: null, share: picked[0]!.share } : null;
    },
    () => null,
  );
  return narrowed?.share ?? 1;
}

function postgresMatch(tree: QueryNode, hints: SearchHints): CompiledMatch {
  const exact = exactCheck(tree, (folded) => sql<boolean>`strpos(m.text_folded, ${folded}) > 0`);
  const share = hints.withoutIndex ? 1 : postgresShare(tree, hints.rarity);
  // A narrowing that leaves a large share reads most heap pages anyway: the planner scans the
  // table then, and looking each candidate up only adds to the work (2.6 s against 1.6 s for
  // `password` at 1M messages, measured with the former trigram index). A term in many words
  // costs a step per word for each candidate: the text is checked instead (wordsWorthReading).
  if (hints.withoutIndex || !hints.words || share > POSTGRES_SCAN_SHARE || !wordsWorthReading(hints.words, share))
    return { exact, narrowing: null, complete: false, share };
  // The candidates' ids first, as an array: `m.id in (subquery)` was planned as a parallel
  // sequential scan of message_words joined to the months (57 ms for 360 candidates of 200k
  // messages), the array from the GIN bitmap then each month's primary key (a few ms).
  const condition = sql<boolean>`m.id = any(array(select w.id from message_words w where w.word_ids @@ ${wordCandidates(hints.words)}::query_int))`;
  return { exact, narrowing: { engine: 'postgres', condition }, complete: false, share };
}

/** A query compiled for one engine, its parts kept apart so a search can choose its plan (search.repository.ts). */
export const matchCompilers: Record<Engine, (tree: QueryNode, hints?: SearchHints) => CompiledMatch> = {
  sqlite: (tree, hints = {}) => sqliteMatch(tree, hints),
  postgres: (tree, hints = {}) => postgresMatch(tree, hints),
};

/**
 * The index-narrowed predicate over `messages m`, as one condition (monitoring rules, documents).
 * On PostgreSQL, without a word narrowing, it is the exact check alone: a rule's window is read
 * by date and checked (messenger.source.ts).
 */
export function matchPredicate(match: CompiledMatch): RawBuilder<boolean> {
  if (!match.narrowing) return match.exact;
  if (match.narrowing.engine === 'sqlite') {
    return sql<boolean>`m.id in (select rowid from messages_fts where messages_fts match ${match.narrowing.match}) and ${match.exact}`;
  }
  return sql<boolean>`${match.narrowing.condition} and ${match.exact}`;
}

export const predicateCompilers: Record<Engine, PredicateCompiler> = {
  sqlite: (tree, hints) => matchPredicate(matchCompilers.sqlite(tree, hints)),
  postgres: (tree, hints) => matchPredicate(matchCompilers.postgres(tree, hints)),
};
