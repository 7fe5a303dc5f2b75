import { sql, type Insertable, type Kysely, type RawBuilder } from 'kysely';
import { prepared } from '../../db/prepared-statements.ts';
import type { Database, SearchHistoryTable } from '../../db/schema.ts';
import type { Engine } from '../../db/store.ts';
import { createMatchCounter, SEARCH_TUNING } from './match-count.ts';
import type { MessageRow } from '../sources/messenger/index.ts';
import { channelBitmapCounts, type ChannelBitmapCount } from '../sources/index.ts';
import {
  createMatchSource,
  SQLITE_CHANNEL_TEXT_INDEX,
  type MatchQuery,
  type MatchSource,
  type OrderKey,
} from './match-source.ts';

/**
 * How a page is found. `walk`: the date index newest first, each row checked exactly, until the
 * page is full: cheap when matches are common. `sort`: every match found (through the trigram
 * index where it narrows) and the newest kept: cheap when they are rare. (On PostgreSQL a rare
 * term under a date-index walk re-checked every row for seconds: docs/performance.md.)
 */
export type PagePlan = 'walk' | 'sort';

/**
 * Chooses the page plan from the exact match count: a walk examines about (offset + limit) ×
 * scope / total rows, a sort about total; walking rows costs a random read each, so a sort is
 * preferred up to twice the rows.
 */
export function pagePlan(input: {
  total: number;
  scope: number;
  offset: number;
  limit: number;
  narrowed: boolean;
}): PagePlan {
  if (!input.narrowed) return 'walk';
  return 2 * (input.offset + input.limit) * input.scope < input.total * input.total ? 'walk' : 'sort';
}

/**
 * The index a SQLite walk reads. The date index visits about (offset + limit) × watermark / total
 * rows, each looked up in the table for its channel; the (channel_id, date, id, text_folded)
 * index, with the channels of a filter as an IN list, walks each channel newest first, checks
 * each row's text in the index itself and leaves the channel once the page can no longer change
 * (SQLite's IN early-out), about channels × (offset + limit) × scope / total entries. The channel
 * index wins when channels × scope < watermark: at 1M messages, 5 channels of 2,000 messages
 * read 0.05 ms against the date index's 5 ms.
 */
function sqliteWalkIndex(query: MatchQuery): string {
  const { channelIds, channelMessages } = query;
  return channelIds?.length && channelMessages !== undefined && channelIds.length * channelMessages < query.maxMessageId
    ? SQLITE_CHANNEL_TEXT_INDEX
    : 'messages_date_idx';
}

/** The columns of a result row, read from a message (`m`, or the walk's `s`) and its channel `c`. */
const RESULT_COLUMNS = ['id', 'message_id', 'channel_id', 'user_id', 'text', 'text_hash', 'date', 'has_media']
  .concat(['media_type', 'file_name', 'links', 'forwarded_from', 'forwarded_from_id', 'via_bot'])
  .concat(['reply_to_message_id', 'edited_at']);
const resultColumns = (message: 'm' | 's') =>
  sql.raw([...RESULT_COLUMNS.map((column) => `${message}.${column}`), 'c.username', 'c.title'].join(', '));

/** Whether a page is PostgreSQL's walk of the chosen channels, each on its (channel_id, date) index. */
const walksChannels = (engine: Engine, query: MatchQuery, plan: PagePlan) =>
  plan === 'walk' &&
  engine === 'postgres' &&
  query.channelsFirst === true &&
  query.channelIds !== undefined &&
  query.channelIds.length > 0;

/** Which page of a query's matches to read, and how (`pagePlan`). */
interface PageOptions {
  plan: PagePlan;
  uniqueOnly: boolean;
  offset: number;
  limit: number;
  after?: OrderKey;
}

/** What a search reads before it is planned (SearchRepository.opening). */
interface OpeningInput {
  watermark: boolean;
  channelIds: number[] | null;
  /** Further columns to select (the lexicon reads of PostgreSQL's word index). */
  columns: RawBuilder<unknown>[];
  /**
   * PostgreSQL, with the watermark and a channel filter: words (an expression over the row `o`
   * of the other columns) whose matches in the chosen channels are counted from their bitmaps
   * in the same statement (word-bitmaps.ts `channelBitmapCounts`), a round trip less.
   */
  countedWords?: RawBuilder<number[]> | null;
  /**
   * PostgreSQL on the primary, with the channel filter counted here: the first page walked and
   * the search recorded in the same statement (`oneTripSearch`).
   */
  firstPage?: FirstPageInput | null;
}

/** What a new search's one statement walks and records (SearchRepository.opening). */
export interface FirstPageInput {
  /** The query checked against each row of the chosen channels (compiled without an index). */
  match: MatchQuery['match'];
  offset: number;
  limit: number;
  /** The history entry to write, but for what the statement counts. */
  record: Omit<Insertable<SearchHistoryTable>, 'total_matches' | 'channels_matched' | 'watermark_message_id'>;
}

/**
 * PostgreSQL: each chosen channel walked newest first on its (channel_id, date) index, the walks
 * merged: no other channel's rows are read (the date index would pass them all). One walk, run
 * for each channel (LATERAL), is planned once over the monthly partitions, where a walk per
 * channel was planned as often: 13 ms of planning for 5 channels. `columns` of the walk `s`
 * joined to its channel `c`: the page's keys, or its rows whole. A prepared statement: its
 * generic plan is the same walk, so after five executions a connection skips its planning; the
 * channels as an array of their own parameters tell the planner how many walks run, where an
 * array parameter's 10 rows (a guess) made the generic plan dearer than the custom ones. Each
 * channel's name is looked up by its key before its walk: joined to the walks' rows, the
 * planner hashed them against a scan of every channel, once per channel (0.61 against 0.37 ms
 * a statement at 1M messages, 500 channels).
 */
function channelWalkStatement<T>(
  source: MatchSource,
  query: MatchQuery,
  options: { offset: number; limit: number; after?: OrderKey },
  columns: RawBuilder<unknown>,
  upTo?: RawBuilder<unknown>,
): RawBuilder<T> {
  const { where } = source.matchSource(query, { above: 0, upTo: query.maxMessageId }, false);
  // A watermark of the statement itself is checked on each row, not offered to the planner as a
  // bound: as a bound it read every month's id range into a bitmap (190 ms against 2.6 ms).
  const below = upTo ? sql`and m.id + 0 <= ${upTo}` : sql``;
  const wanted = options.offset + options.limit;
  return sql<T>`
    select ${columns} from unnest(array[${sql.join(query.channelIds!)}]::bigint[]) as w (channel_id)
    join channels c on c.id = w.channel_id cross join lateral (
      select m.* from messages m
      where m.channel_id = w.channel_id and ${where} ${below} and ${source.keysetCondition(options.after)}
      order by m.date desc, m.id desc limit ${wanted}) s
    order by s.date desc, s.id desc limit ${options.limit} offset ${options.offset}`;
}

/** Rows of the chosen channels a one-trip search's walk may read for its page: beyond, it reads the page on its own. */
const ONE_TRIP_WALK_ROWS = 2_000;

/**
 * PostgreSQL, a new search of words in chosen channels, reading on the primary: the opening
 * statement (the row `o`, the channels counted from their bitmaps) as the first part of one
 * that also walks the first page (`channelWalkStatement` below `o.watermark`) and records the
 * search, where three statements took two round trips (the opening, then the walk beside the
 * history insert): 0.8–1.0 ms against 1.6–2.0 ms, and 1.6–1.8 ms against 3.4 ms when the
 * backend had to be woken (docs/performance.md, "One round trip for a channel filter on
 * PostgreSQL"). The history row is written with the total and the channels counted here, only
 * when every chosen channel is known (else the search answers 400) and none holds a message with
 * a word too long for the lexicon (whose text the count checks in a statement of its own); the
 * search then records itself as before. Its commit does not wait for the WAL flush, as the
 * history's own pool commits (src/db/store.ts). The page is walked only when the matches are
 * common enough for the walk to stop early (ONE_TRIP_WALK_ROWS); the planner still decides
 * whether this page is the one to answer with (`channelsFirst`).
 */
function oneTripSearch(source: MatchSource, opening: RawBuilder<unknown>, channelIds: number[], input: FirstPageInput) {
  const { record } = input;
  const walk = channelWalkStatement(
    source,
    { match: input.match, channelIds, maxMessageId: Number.MAX_SAFE_INTEGER },
    input,
    resultColumns('s'),
    sql`o.watermark`,
  );
  return sql`
    with o as materialized (${opening}),
    t as (
      select coalesce(sum(c.n), 0) as total, count(*) filter (where c.n > 0) as channels,
        coalesce(bool_or(c.long), false) as long,
        (select coalesce(sum((e ->> 2)::bigint), 0) from o, json_array_elements(o.channels) e) as messages
      from (select (x ->> 'bits')::bigint + (x ->> 'rare')::bigint - (x ->> 'long_with_bits')::bigint as n,
                   (x ->> 'long_words')::bigint > 0 as long
            from o, json_array_elements(o.channel_counts) x) c),
    h as (
      insert into search_history (org_id, user_id, query, parsed_query, options, searched_at, total_matches,
        channels_matched, watermark_message_id)
      select ${record.org_id}::bigint, ${record.user_id ?? null}::bigint, ${record.query}::text,
        ${record.parsed_query}::text, ${record.options}::text, ${record.searched_at}::bigint, t.total, t.channels,
        o.watermark
      from o, t where not t.long and json_array_length(o.channels) = ${channelIds.length}
      returning id)
    select o.*, (select id from h) as history_id,
      case when ${input.offset + input.limit} * t.messages <= ${ONE_TRIP_WALK_ROWS} * t.total
        then (select coalesce(json_agg(r), '[]') from (${walk}) r) end as first_page,
      set_config('synchronous_commit', 'off', true) as commit_without_flush
    from o, t`;
}

/**
 * What a search reads before it is planned, in one statement: the watermark (when asked),
 * the message counts of the chosen channels (unknown ids are absent) and `columns` (the
 * lexicon reads of PostgreSQL's word index), where three statements side by side each
 * waited for a backend or a reader thread of their own. PostgreSQL reads the watermark from
 * the word index, written in the messages' own transaction: one index lookup instead of one
 * per monthly partition.
 */
async function openingReads(reader: Kysely<Database>, engine: Engine, source: MatchSource, input: OpeningInput) {
  const { channelIds } = input;
  const table = sql.raw(engine === 'postgres' ? 'message_words' : 'messages');
  // PostgreSQL also reads each channel's messages as its bitmaps count them (word-bitmaps.ts).
  const sizes =
    engine === 'postgres'
      ? sql`(select json_agg(json_build_array(c.id, c.total_messages_scraped, coalesce(s.messages, 0)))
             from channels c left join message_channel_sizes s on s.channel_id = c.id
             where c.id in (${sql.join(channelIds ?? [])}))`
      : sql`(select json_group_array(json_array(id, total_messages_scraped)) from channels
             where id in (${sql.join(channelIds ?? [])}))`;
  const columns = [
    sql`${input.watermark ? sql`(select max(id) from ${table})` : sql`null`} as watermark`,
    sql`${channelIds?.length ? sizes : sql`null`} as channels`,
    ...input.columns,
  ];
  const countedWords = engine === 'postgres' && input.watermark && channelIds?.length ? input.countedWords : null;
  const counted = countedWords
    ? sql`, (select json_agg(x) from (${channelBitmapCounts(
        countedWords,
        sql`(select c.id, coalesce(s.messages, 0) from unnest(array[${sql.join(channelIds!)}]::bigint[]) as c (id)
               left join message_channel_sizes s on s.channel_id = c.id)`,
        sql`o.watermark`,
      )}) x) as channel_counts`
    : sql``;
  const opening = sql`select o.*${counted} from (select ${sql.join(columns)}) o`;
  const firstPage = countedWords && input.firstPage ? input.firstPage : null;
  const { rows } = await prepared(
    sql<
      Record<string, unknown> & {
        watermark: number | null;
        channels: unknown;
        channel_counts?: unknown;
        first_page?: MessageRow[] | null;
        history_id?: string | null;
      }
    >`${firstPage ? oneTripSearch(source, opening, channelIds!, firstPage) : opening}`,
  ).execute(reader);
  const row = rows[0]!;
  const channels = (typeof row.channels === 'string' ? JSON.parse(row.channels) : row.channels) as
    [number, number, number?][] | null;
  return {
    watermark: Number(row.watermark ?? 0),
    channelSizes: new Map((channels ?? []).map(([id, size]) => [Number(id), Number(size)])),
    /**
     * PostgreSQL: the chosen channels' messages up to the watermark, when it was read here (the
     * same snapshot): the positions up to which their bitmaps count.
     */
    channelPositions:
      engine === 'postgres' && input.watermark
        ? new Map((channels ?? []).map(([id, , indexed]) => [Number(id), Number(indexed)]))
        : undefined,
    /** The chosen channels' bitmap counts of `countedWords`, when asked. */
    channelCounts: (row.channel_counts ?? undefined) as ChannelBitmapCount[] | undefined,
    /** With `firstPage`: the page's rows when it was walked, and the history entry when it was written. */
    firstPage: firstPage
      ? { rows: row.first_page ?? null, historyId: row.history_id ? Number(row.history_id) : null }
      : null,
    row,
  };
}

export function createSearchRepository(deps: {
  reader: Kysely<Database>;
  readerSlots: number;
  engine: Engine;
  tuning?: Partial<typeof SEARCH_TUNING>;
}) {
  const { reader, engine } = deps;
  const source = createMatchSource(engine);
  const { matchSource, keysetCondition } = source;

  async function channelWalk<T>(
    query: MatchQuery,
    options: { offset: number; limit: number; after?: OrderKey },
    columns: RawBuilder<unknown>,
  ): Promise<T[]> {
    return (await prepared(channelWalkStatement<T>(source, query, options, columns)).execute(reader)).rows;
  }

  /** The statement of one page's keys, newest first, optionally after a known row (keyset). */
  function pageKeys(query: MatchQuery, options: PageOptions): RawBuilder<OrderKey> {
    const range = { above: 0, upTo: query.maxMessageId };
    if (options.uniqueOnly) {
      // The newest message of each distinct text stands for it.
      const { from, where } = matchSource(query, range);
      return sql<OrderKey>`
        select g.id, g.date from (
          select m.id, m.date, row_number() over (partition by m.text_hash order by m.date desc, m.id desc) as n
          from ${from} where ${where}) g
        where g.n = 1 and ${options.after ? sql`(g.date, g.id) < (${options.after.date}, ${options.after.id})` : sql`1 = 1`}
        order by g.date desc, g.id desc limit ${options.limit} offset ${options.offset}`;
    }
    if (options.plan === 'walk') {
      const { from, where } = matchSource(query, range, false);
      const indexed = engine === 'sqlite' ? sql`${from} indexed by ${sql.raw(sqliteWalkIndex(query))}` : from;
      return sql<OrderKey>`
        select m.id, m.date from ${indexed} where ${where} and ${keysetCondition(options.after)}
        order by m.date desc, m.id desc limit ${options.limit} offset ${options.offset}`;
    }
    const { from, where } = matchSource(query, range);
    // PostgreSQL: the OFFSET 0 fence keeps the planner from walking the date index for a rare
    // term. SQLite's CROSS JOIN already puts the trigram index first.
    const fence = engine === 'postgres' ? sql`offset 0` : sql``;
    return sql<OrderKey>`
      select s.id, s.date from (select m.id, m.date from ${from} where ${where} and ${keysetCondition(options.after)} ${fence}) s
      order by s.date desc, s.id desc limit ${options.limit} offset ${options.offset}`;
  }

  /** The keys of one page of matches, newest first, optionally after a known row (keyset). */
  async function page(query: MatchQuery, options: PageOptions): Promise<OrderKey[]> {
    if (walksChannels(engine, query, options.plan)) return channelWalk(query, options, sql`s.id, s.date`);
    return (await pageKeys(query, options).execute(reader)).rows;
  }

  /** The messages of these keys with their channels' names, in the order given. */
  async function messages(keys: OrderKey[]): Promise<MessageRow[]> {
    if (keys.length === 0) return [];
    // Their dates let PostgreSQL plan only the months that hold them.
    const { rows } = await sql<MessageRow>`
      select ${resultColumns('m')}
      from messages m join channels c on c.id = m.channel_id
      where m.id in (${sql.join(keys.map((k) => k.id))}) and m.date in (${sql.join(keys.map((k) => k.date))})`.execute(
      reader,
    );
    const byId = new Map(rows.map((row) => [Number(row.id), row]));
    return keys.map((key) => byId.get(Number(key.id))!);
  }

  return {
    opening: (input: OpeningInput) => openingReads(reader, engine, source, input),

    count: createMatchCounter({
      reader,
      engine,
      readerSlots: deps.readerSlots,
      source,
      tuning: { ...SEARCH_TUNING, ...deps.tuning },
    }),

    page,

    messages,

    /**
     * The rows of one page (as `page` finds them, then `messages`), in one statement where it can
     * be: a walk of the chosen channels on PostgreSQL, and every page on SQLite (the keys joined
     * to their rows), the second's round trip and planning saved (docs/performance.md, "The
     * channel filter on both stores"). PostgreSQL's other pages read their rows by key and date,
     * so that only the months holding them are planned.
     */
    async pageRows(query: MatchQuery, options: PageOptions): Promise<MessageRow[]> {
      if (!options.uniqueOnly && walksChannels(engine, query, options.plan))
        return channelWalk<MessageRow>(query, options, resultColumns('s'));
      if (engine === 'postgres') return messages(await page(query, options));
      // Between two statements, a count's part running beside (a channel filter read first)
      // took the reader and the page waited for it.
      const { rows } = await sql<MessageRow>`
        select ${resultColumns('m')} from (${pageKeys(query, options)}) k
        join messages m on m.id = k.id join channels c on c.id = m.channel_id
        order by k.date desc, k.id desc`.execute(reader);
      return rows;
    },

    /** The channels each of these texts appears in, as of the watermark. */
    async channelsOfTexts(hashes: string[], maxMessageId: number, channelIds?: number[]) {
      if (hashes.length === 0) return new Map<string, string[]>();
      let query = reader
        .selectFrom('messages as m')
        .innerJoin('channels as c', 'c.id', 'm.channel_id')
        .select(['m.text_hash', 'c.id', 'c.username', 'c.title'])
        .distinct()
        .where('m.text_hash', 'in', hashes)
        .where('m.id', '<=', maxMessageId)
        .orderBy('c.id');
      if (channelIds?.length) query = query.where('m.channel_id', 'in', channelIds);
      const byHash = new Map<string, string[]>();
      for (const row of await query.execute()) {
        const list = byHash.get(row.text_hash) ?? [];
        list.push(row.username ?? row.title);
        byHash.set(row.text_hash, list);
      }
      return byHash;
    },
  };
}

export type SearchRepository = ReturnType<typeof createSearchRepository>;
