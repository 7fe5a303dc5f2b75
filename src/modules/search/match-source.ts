import { sql } from 'kysely';
import { livenessCheck } from '../../db/sqlite-readers.ts';
import type { Engine } from '../../db/store.ts';
import type { ChannelBitmapCount, CompiledMatch } from '../sources/index.ts';

/**
 * SQLite's channel index, (channel_id, date, id, text_folded) (migration messenger/0016): a
 * channel filter's rows with their folded texts, read without the table.
 */
export const SQLITE_CHANNEL_TEXT_INDEX = 'messages_channel_text_idx';

/** One search as the store evaluates it: the compiled query over the messages that existed when it first ran. */
export interface MatchQuery {
  match: CompiledMatch;
  channelIds?: number[];
  /** Messages in those channels (all of them, a cost estimate). */
  channelMessages?: number;
  /** The same, channel by channel. */
  channelSizes?: ReadonlyMap<number, number>;
  /** The chosen channels hold fewer messages than the index would return: their rows are read first. */
  channelsFirst?: boolean;
  /** The highest message id at search time: re-reads and exports see exactly what the search saw. */
  maxMessageId: number;
  /**
   * PostgreSQL: the query as intarray `query_int`s over `message_words.word_ids` (a message
   * matches one of them), when they are exact for the messages without long words
   * (word-index.ts `countingWords`): counts need no text then.
   */
  words?: string[];
  /**
   * PostgreSQL: the lexicon ids of a query that is exactly "has one of these words" (a term, or
   * terms ORed), which a count may take from the words' bitmaps (word-bitmaps.ts).
   */
  anyWords?: number[];
  /**
   * PostgreSQL: the number of messages of each chosen channel up to the watermark, read with it,
   * up to which a channel's bitmaps are counted (word-bitmaps.ts).
   */
  channelPositions?: ReadonlyMap<number, number>;
  /** PostgreSQL: the channels' bitmap counts of `anyWords`, read by the opening statement. */
  channelCounts?: ChannelBitmapCount[];
}

/** A row's place in the newest-first order (date descending, then id descending). */
export interface OrderKey {
  date: number;
  id: number;
}

/** An id range of messages, (above, upTo]. */
export interface IdRange {
  above: number;
  upTo: number;
}

/**
 * An integer parameter. better-sqlite3 binds every JavaScript number as a REAL, and FTS5 then
 * ignores a rowid range (it counted a half range as slowly as the whole index).
 */
export const integer = (value: number) => sql`cast(${value} as bigint)`;

/** The SQL fragments that counting and paging a search share. */
export function createMatchSource(engine: Engine) {
  const channelCondition = (query: MatchQuery) =>
    query.channelIds?.length ? sql`m.channel_id in (${sql.join(query.channelIds)})` : sql`1 = 1`;
  // SQLite: the rows a long read visits let it be interrupted (its client gone); PostgreSQL
  // cancels the backend's statement instead (db/cancellation.ts).
  const alive = (rowId: string) => (engine === 'sqlite' ? sql.raw(livenessCheck(rowId)) : sql`1 = 1`);

  return {
    channelCondition,
    alive,
    keysetCondition: (after: OrderKey | undefined) =>
      after ? sql`(m.date, m.id) < (${after.date}, ${after.id})` : sql`1 = 1`,
    sqliteIndexMatch: (query: MatchQuery) =>
      query.match.narrowing?.engine === 'sqlite' ? query.match.narrowing.match : null,

    /**
     * The matching rows of `messages m` with id in (above, upTo], as a FROM clause and a WHERE
     * condition. On SQLite the trigram index drives the join: FTS5 streams its rowids in order and
     * each is looked up once, where `m.id in (subquery)` would first copy them all into a
     * temporary b-tree.
     */
    matchSource(query: MatchQuery, range: IdRange, useIndex = true) {
      const { narrowing, exact } = query.match;
      const where = sql<boolean>`${alive('m.id')} and ${exact} and m.id > ${range.above} and m.id <= ${range.upTo} and ${channelCondition(query)}`;
      if (!useIndex || !narrowing) return { from: sql`messages m`, where };
      if (narrowing.engine === 'sqlite') {
        return {
          from: sql`messages_fts f cross join messages m on m.id = f.rowid`,
          where: sql<boolean>`f.messages_fts match ${narrowing.match} and f.rowid > ${integer(range.above)} and f.rowid <= ${integer(range.upTo)} and ${where}`,
        };
      }
      return { from: sql`messages m`, where: sql<boolean>`${narrowing.condition} and ${where}` };
    },
  };
}

export type MatchSource = ReturnType<typeof createMatchSource>;
