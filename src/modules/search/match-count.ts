import { sql, type Kysely, type RawBuilder } from 'kysely';
import { prepared } from '../../db/prepared-statements.ts';
import type { Database } from '../../db/schema.ts';
import {
  bitmapCount,
  channelBitmapCounts,
  CHUNK_WORDS,
  HAS_LONG_WORDS,
  LONG_WORDS,
  wordsWithBitmaps,
} from '../sources/index.ts';
import type { Engine } from '../../db/store.ts';
import { integer, SQLITE_CHANNEL_TEXT_INDEX, type IdRange, type MatchQuery, type MatchSource } from './match-source.ts';

export interface MatchCounts {
  total: number;
  channels: number;
  /** Distinct texts among the matches (unique_only), when asked for. */
  groups: number;
}

/** Where one plan gives way to another; tests move them to run every plan on a small corpus. */
export const SEARCH_TUNING = {
  /** Expected candidate rows from which a count is split over the readers. */
  splitFromRows: 20_000,
  /**
   * Rows of a channel filter read first from which its channels are split over the readers:
   * each row's text is checked, about 0.3 µs a row, where a part costs a reader's hop (0.1 ms).
   */
  splitChannelsFromRows: 4_000,
  /** Up to this many matches, their channels are looked up one by one; beyond, each channel is probed. */
  channelsFromMatches: 50_000,
  /** Newest messages of a channel checked by a probe before the channel is settled the slow way. */
  probeRows: 32,
  /** A message read and checked costs about this many index entries looked up. */
  rowCostInIndexEntries: 5,
};

/** A share of a count's work: the query's rows in `range`, of `query`'s channels. */
interface CountPart {
  query: MatchQuery;
  range: IdRange;
}

/**
 * A channel filter read first, its channels dealt to `parts` groups of about equal size, the
 * largest first: each group's rows are read through the channel index, which an id range would
 * not narrow (every range would check all of their texts).
 */
function channelGroups(query: MatchQuery, parts: number): number[][] {
  const sizes = query.channelSizes;
  const channels = [...query.channelIds!].sort((a, b) => (sizes?.get(b) ?? 0) - (sizes?.get(a) ?? 0));
  const groups = Array.from({ length: Math.min(parts, channels.length) }, () => ({ ids: [] as number[], rows: 0 }));
  for (const id of channels) {
    const smallest = groups.reduce((min, group) => (group.rows < min.rows ? group : min));
    smallest.ids.push(id);
    smallest.rows += sizes?.get(id) ?? 1;
  }
  return groups.map((group) => group.ids);
}

/**
 * The parts of a count that the readers compute side by side, one per reader when the work is
 * worth splitting: contiguous id ranges covering (0, maxMessageId], or, for a channel filter
 * read first, groups of its channels (docs/performance.md, "The SQLite channel filter on two
 * readers").
 */
function countParts(query: MatchQuery, tuning: typeof SEARCH_TUNING, readerSlots: number): CountPart[] {
  const whole = { above: 0, upTo: query.maxMessageId };
  if (query.channelsFirst && query.channelIds?.length) {
    const rows = query.channelMessages ?? query.match.share * query.maxMessageId;
    const parts = rows < tuning.splitChannelsFromRows ? 1 : readerSlots;
    return channelGroups(query, parts).map((channelIds) => ({ query: { ...query, channelIds }, range: whole }));
  }
  const parts = query.match.share * query.maxMessageId < tuning.splitFromRows ? 1 : readerSlots;
  const step = Math.ceil(query.maxMessageId / parts);
  return Array.from({ length: parts }, (_, i) => ({
    query,
    range: { above: i * step, upTo: Math.min(query.maxMessageId, (i + 1) * step) },
  }));
}

/**
 * PostgreSQL: the messages with a word too long for the lexicon (ids up to `upTo`, in the
 * channels `inChannels` restricts to), whose text decides, as `w` joined to their rows `m`.
 * They are few, found through their own partial index (migration messenger/0015); the fence
 * keeps them planned on their own: joined in one plan, PostgreSQL's guess of a few hundred rows
 * made a scan of the whole word index the cheaper way (65 ms a broad search at 200,000
 * messages, for no row).
 */
const longWordMessages = (upTo: number, inChannels: RawBuilder<unknown> = sql``) =>
  sql`(select w.id, w.channel_id, w.word_ids from message_words w
       where w.word_ids @@ ${HAS_LONG_WORDS} and w.id <= ${upTo} ${inChannels} offset 0) w
      join messages m on m.id = w.id`;

/**
 * PostgreSQL, a broad query of words, most of them frequent: the messages with a frequent one
 * counted from their bitmaps (word-bitmaps.ts), those with only a rare one read from the word
 * index, and those with a word too long for the lexicon checked against their text instead;
 * the channels probed, each by its newest rows of the word index, and those without a match
 * there counted from the index. Ids up to the watermark commit in order (writers take turns,
 * message-transactions.ts), so the statements need no common snapshot. Null when no word, or
 * more than a GIN scan takes at once (CHUNK_WORDS), has no bitmap.
 */
async function countFromBitmaps(
  deps: {
    reader: Kysely<Database>;
    tuning: typeof SEARCH_TUNING;
    /** The matches of each channel with one, counted from the word index. */
    channelCountsFromWords: (query: MatchQuery, words: string[]) => Promise<unknown[]>;
  },
  query: MatchQuery,
  wordIds: number[],
): Promise<MatchCounts | null> {
  const { reader } = deps;
  const frequent = await wordsWithBitmaps(reader, wordIds);
  const rare = wordIds.filter((id) => !frequent.includes(id));
  if (frequent.length === 0 || rare.length > CHUNK_WORDS) return null;
  const anyOf = (ids: number[]) => `(${ids.join('|')})`;
  const upTo = query.maxMessageId;
  const onlyRare = rare.length
    ? sql`(select count(*) from message_words w
           where w.word_ids @@ ${`${anyOf(rare)}&!${anyOf(frequent)}&!${LONG_WORDS}`}::query_int and w.id <= ${upTo})`
    : sql`0`;
  const { rows } = await sql<{ bits: string; rare: string; long_with_bits: string; long_matching: string }>`
    select ${bitmapCount(frequent, upTo)} as bits, ${onlyRare} as rare,
      count(*) filter (where w.word_ids @@ ${anyOf(frequent)}::query_int) as long_with_bits,
      count(*) filter (where ${query.match.exact}) as long_matching
    from ${longWordMessages(upTo)}`.execute(reader);
  const row = rows[0]!;
  const total = Number(row.bits) + Number(row.rare) - Number(row.long_with_bits) + Number(row.long_matching);
  const { rows: probed } = await sql<{ id: number; found: boolean }>`
    select c.id, exists (
      select 1 from (select w.word_ids from message_words w where w.channel_id = c.id and w.id <= ${upTo}
                     order by w.id desc limit ${deps.tuning.probeRows}) w
      where w.word_ids @@ ${`${anyOf(wordIds)}&!${LONG_WORDS}`}::query_int) as found
    from channels c`.execute(reader);
  const unsettled = probed.filter((channel) => !channel.found).map((channel) => Number(channel.id));
  const settled = unsettled.length
    ? (await deps.channelCountsFromWords({ ...query, channelIds: unsettled }, [anyOf(wordIds)])).length
    : 0;
  return { total, channels: probed.length - unsettled.length + settled, groups: total };
}

/**
 * PostgreSQL, a channel filter of words, counted per channel from the channels' bitmaps
 * (word-bitmaps.ts `channelBitmapCounts`) up to their sizes at the watermark
 * (`channelPositions`): by the search's opening statement already (`channelCounts`), or, for a
 * query planned without those (at a given watermark), by a prepared statement of its own. The
 * channels, the words and the sizes go as one parameter
 * each (`array[$1, $2, …]`), so that the generic plan knows how many rows each holds and
 * PostgreSQL runs it after five executions, skipping 1 ms of planning. The messages with a word
 * too long for the lexicon are checked against their text by a second statement, only when the
 * channels hold some.
 */
async function channelCountsFromBitmaps(
  reader: Kysely<Database>,
  query: MatchQuery,
  wordIds: number[],
  positions: ReadonlyMap<number, number>,
): Promise<MatchCounts> {
  const upTo = query.maxMessageId;
  const array = (values: number[], type: string) => sql<number[]>`array[${sql.join(values)}]::${sql.raw(type)}`;
  const channels = sql`unnest(${array([...positions.keys()], 'bigint[]')}, ${array([...positions.values()], 'int[]')})`;
  const rows =
    query.channelCounts ??
    (await prepared(channelBitmapCounts(array(wordIds, 'int[]'), channels, upTo)).execute(reader)).rows;
  const totals = new Map(
    rows.map((row) => [Number(row.channel_id), Number(row.bits) + Number(row.rare) - Number(row.long_with_bits)]),
  );
  const withLongWords = rows.filter((row) => Number(row.long_words) > 0).map((row) => Number(row.channel_id));
  if (withLongWords.length) {
    const { rows: long } = await sql<{ channel_id: string; n: string }>`
      select w.channel_id, count(*) as n from ${longWordMessages(upTo, sql`and w.channel_id in (${sql.join(withLongWords)})`)}
      where ${query.match.exact}
      group by w.channel_id`.execute(reader);
    for (const row of long) totals.set(Number(row.channel_id), totals.get(Number(row.channel_id))! + Number(row.n));
  }
  const total = [...totals.values()].reduce((sum, n) => sum + n, 0);
  return { total, channels: [...totals.values()].filter((n) => n > 0).length, groups: total };
}

/** The matches, their channels and their distinct texts (unique_only), in one pass over `source`. */
async function countWithTexts(
  reader: Kysely<Database>,
  source: { from: RawBuilder<unknown>; where: RawBuilder<boolean> },
) {
  const { rows } = await sql<MatchCounts>`
    select count(*) as total, count(distinct m.channel_id) as channels, count(distinct m.text_hash) as groups
    from ${source.from} where ${source.where}`.execute(reader);
  const row = rows[0]!;
  return { total: Number(row.total), channels: Number(row.channels), groups: Number(row.groups) };
}

/**
 * SQLite, a query that no index narrows and no channel filter limits (a term shorter than a
 * trigram), whose every text up to the watermark is checked: as a filter of every channel, so
 * that the texts are read from the channel index, which holds the folded text and little else
 * (a table row holds both texts and every column: 1.75 times the bytes a message), and the
 * channels are dealt to the readers (docs/performance.md, "The SQLite channel filter on two
 * readers").
 */
async function checkingEveryChannel(reader: Kysely<Database>, engine: Engine, query: MatchQuery): Promise<MatchQuery> {
  const everyText = query.match.narrowing === null && !query.channelIds?.length;
  if (engine !== 'sqlite' || !everyText) return query;
  const { rows } = await sql<{ id: number; size: number }>`
    select id, total_messages_scraped as size from channels`.execute(reader);
  return {
    ...query,
    channelIds: rows.map((row) => Number(row.id)),
    channelSizes: new Map(rows.map((row) => [Number(row.id), Number(row.size)])),
    channelMessages: query.maxMessageId,
    channelsFirst: true,
  };
}

/**
 * Counts a search's matches and the channels they are in, without keeping the matches anywhere,
 * choosing how by how many matches the index expects.
 */
export function createMatchCounter(deps: {
  reader: Kysely<Database>;
  engine: Engine;
  readerSlots: number;
  source: MatchSource;
  tuning: typeof SEARCH_TUNING;
}) {
  const { reader, source, tuning } = deps;
  const { channelCondition, alive, matchSource } = source;

  /** Gathers per-part results that the readers compute side by side. */
  async function overParts<T>(query: MatchQuery, count: (part: CountPart) => Promise<T[]>): Promise<T[]> {
    return (await Promise.all(countParts(query, tuning, deps.readerSlots).map(count))).flat();
  }

  /**
   * SQLite, a query the index answers whole: the matches of each channel from the index and a
   * narrow (id, channel_id) index, without reading a message.
   */
  function channelCountsFromIndex(query: MatchQuery, match: string) {
    return overParts(query, async ({ query, range }) => {
      const { rows } = await sql<{ channel_id: number; n: number }>`
        select m.channel_id, count(*) as n
        from messages_fts f cross join messages m indexed by messages_id_channel_idx on m.id = f.rowid
        where f.messages_fts match ${match} and f.rowid > ${integer(range.above)} and f.rowid <= ${integer(range.upTo)} and ${channelCondition(query)}
          and ${alive('f.rowid')}
        group by m.channel_id`.execute(reader);
      return rows;
    });
  }

  /**
   * Channels with a match when matches are many: each channel's newest messages are checked
   * until one matches, which for a broad query takes a message or two per channel. A channel
   * whose newest `probeRows` messages hold none is settled by reading all of its messages, or,
   * when those are more than the matches, from the index.
   */
  async function probeChannels(query: MatchQuery, match: string, total: number): Promise<number> {
    const { rows } = await sql<{ id: number; size: number; found: number }>`
      select c.id, c.total_messages_scraped as size, exists (
        select 1 from (select m.text_folded from messages m where m.channel_id = c.id and m.id <= ${query.maxMessageId}
                       order by m.date desc limit ${tuning.probeRows}) m
        where ${query.match.exact}) as found
      from channels c
      where exists (select 1 from messages m where m.channel_id = c.id and m.id <= ${query.maxMessageId})`.execute(
      reader,
    );
    const unsettled = rows.filter((row) => Number(row.found) !== 1);
    const found = rows.length - unsettled.length;
    if (unsettled.length === 0) return found;
    const ids = sql.join(unsettled.map((row) => Number(row.id)));
    const unsettledMessages = unsettled.reduce((sum, row) => sum + Number(row.size), 0);
    const { rows: more } =
      unsettledMessages * tuning.rowCostInIndexEntries < total
        ? await sql<{ n: number }>`
            select count(*) as n from channels c where c.id in (${ids}) and exists (
              select 1 from messages m where m.channel_id = c.id and m.id <= ${query.maxMessageId} and ${query.match.exact})`.execute(
            reader,
          )
        : await sql<{ n: number }>`
            select count(distinct m.channel_id) as n
            from messages_fts f cross join messages m indexed by messages_id_channel_idx on m.id = f.rowid
            where f.messages_fts match ${match} and f.rowid <= ${integer(query.maxMessageId)} and m.channel_id in (${ids})`.execute(
            reader,
          );
    return found + Number(more[0]?.n ?? 0);
  }

  /**
   * PostgreSQL, a query of words: the matches of each channel from the word index, reading one
   * narrow row per match and no text; the few messages with a word too long for the lexicon are
   * checked against their text instead. A channel filter is a key of the same GIN index
   * (migration messenger/0011): one index scan finds the chosen channels' matches and no other
   * row, where reading the channels' rows read 10,000 to find 3,921 (docs/performance.md, "The
   * channel filter on both stores"). Chunks of a disjunction (word-index.ts `countingWords`) are
   * each a GIN scan of the BitmapOr; a sequential scan would check every row against all of them
   * (59 s for `1` at 1M messages), so it is ruled out for that statement.
   */
  async function channelCountsFromWords(query: MatchQuery, words: string[]) {
    const inChannels = query.channelIds?.length ? sql`and w.channel_id in (${sql.join(query.channelIds)})` : sql``;
    const matching =
      words.length === 1
        ? sql`w.word_ids @@ ${`(${words[0]})&!${LONG_WORDS}`}::query_int`
        : sql`(${sql.join(
            words.map((chunk) => sql`w.word_ids @@ ${chunk}::query_int`),
            sql` or `,
          )}) and not w.word_ids @@ ${String(LONG_WORDS)}::query_int`;
    const counts = (db: Kysely<Database>) =>
      sql<{ channel_id: number; n: number }>`
      select channel_id, count(*) as n from (
        select w.channel_id from message_words w
        where ${matching} and w.id <= ${query.maxMessageId} ${inChannels}
        union all
        select w.channel_id from ${longWordMessages(query.maxMessageId, inChannels)} where ${query.match.exact}
      ) s group by channel_id`.execute(db);
    if (words.length === 1) return (await counts(reader)).rows;
    return reader.transaction().execute(async (tx) => {
      await sql`set local enable_seqscan = off`.execute(tx);
      return (await counts(tx)).rows;
    });
  }

  /**
   * The number of matches and of channels with one (and of distinct texts with uniqueOnly).
   * Candidates the index cannot vouch for are read and checked, their channels counted in the
   * same pass; id ranges are counted side by side.
   */
  return async function count(query: MatchQuery, uniqueOnly: boolean): Promise<MatchCounts> {
    if (uniqueOnly) return countWithTexts(reader, matchSource(query, { above: 0, upTo: query.maxMessageId }));
    if (query.anyWords && query.channelIds?.length && query.channelPositions)
      return channelCountsFromBitmaps(reader, query, query.anyWords, query.channelPositions);
    // Many matches expected, no channel filter: counted from bitmaps or the index, then the channels probed.
    const broad = !query.channelIds?.length && query.match.share * query.maxMessageId > tuning.channelsFromMatches;
    const bitmaps = { reader, tuning, channelCountsFromWords };
    const counted = query.anyWords && broad && (await countFromBitmaps(bitmaps, query, query.anyWords));
    if (counted) return counted;
    const indexMatch = query.match.complete ? source.sqliteIndexMatch(query) : null;
    // (Few matches, or none of those paths: counted with their channels in one pass, below.)
    if (indexMatch && broad) {
      const totals = await overParts(query, async ({ range }) => {
        const { rows } = await sql<{ n: number }>`
          select count(*) as n from messages_fts
          where messages_fts match ${indexMatch} and rowid > ${integer(range.above)} and rowid <= ${integer(range.upTo)} and ${alive('rowid')}`.execute(
          reader,
        );
        return rows;
      });
      const total = totals.reduce((sum, row) => sum + Number(row.n), 0);
      if (total > tuning.channelsFromMatches)
        return { total, channels: await probeChannels(query, indexMatch, total), groups: total };
    }
    const perChannel = query.words
      ? await channelCountsFromWords(query, query.words)
      : indexMatch
        ? await channelCountsFromIndex(query, indexMatch)
        : await overParts(await checkingEveryChannel(reader, deps.engine, query), async ({ query, range }) => {
            const { from, where } = matchSource(query, range);
            const read =
              deps.engine === 'sqlite' && query.channelsFirst
                ? sql`${from} indexed by ${sql.raw(SQLITE_CHANNEL_TEXT_INDEX)}`
                : from;
            const { rows } = await sql<{ channel_id: number; n: number }>`
            select m.channel_id, count(*) as n from ${read} where ${where} group by m.channel_id`.execute(reader);
            return rows;
          });
    const total = perChannel.reduce((sum, row) => sum + Number(row.n), 0);
    return { total, channels: new Set(perChannel.map((row) => Number(row.channel_id))).size, groups: total };
  };
}
