import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { livenessCheck } from '../../db/sqlite-readers.ts';
import type { Engine } from '../../db/store.ts';
import type { CompiledMatch } from '../sources/index.ts';
import type { MessageRow } from '../sources/messenger/index.ts';

/** One search as the store evaluates it: the compiled query over the messages that existed when it first ran. */
export interface MatchQuery {
  match: CompiledMatch;
  channelIds?: number[];
  /** The highest message id at search time: re-reads and exports see exactly what the search saw. */
  maxMessageId: number;
}

/** A row's place in the newest-first order (date descending, then id descending). */
export interface OrderKey {
  date: number;
  id: number;
}

/**
 * How a page is found. `walk`: the date index newest first, each row checked exactly, until the
 * page is full: cheap when matches are common. `sort`: every match found (through the trigram
 * index where it narrows) and the newest kept: cheap when they are rare. (On PostgreSQL a rare
 * term under a date-index walk re-checked every row for seconds: docs/performance.md.)
 */
export type PagePlan = 'walk' | 'sort';

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
  /** Up to this many matches, their channels are looked up one by one; beyond, each channel is probed. */
  channelsFromMatches: 50_000,
  /** Newest messages of a channel checked by a probe before the channel is settled the slow way. */
  probeRows: 32,
  /** A message read and checked costs about this many index entries looked up. */
  rowCostInIndexEntries: 5,
};

/**
 * Chooses the page plan from the exact match count: a walk examines about (offset + limit) ×
 * scope / total rows, a sort about total; walking rows costs a random read each, so a sort is
 * preferred up to twice the rows.
 */
export function pagePlan(input: { total: number; scope: number; offset: number; limit: number; narrowed: boolean }): PagePlan {
  if (!input.narrowed) return 'walk';
  return 2 * (input.offset + input.limit) * input.scope < input.total * input.total ? 'walk' : 'sort';
}

/**
 * An integer parameter. better-sqlite3 binds every JavaScript number as a REAL, and FTS5 then
 * ignores a rowid range (it counted a half range as slowly as the whole index).
 */
const integer = (value: number) => sql`cast(${value} as bigint)`;

export function createSearchRepository(deps: { reader: Kysely<Database>; readerSlots: number; engine: Engine; tuning?: Partial<typeof SEARCH_TUNING> }) {
  const { reader, engine } = deps;
  const tuning = { ...SEARCH_TUNING, ...deps.tuning };

  const channelCondition = (query: MatchQuery) => (query.channelIds?.length ? sql`m.channel_id in (${sql.join(query.channelIds)})` : sql`1 = 1`);
  const keysetCondition = (after: OrderKey | undefined) => (after ? sql`(m.date, m.id) < (${after.date}, ${after.id})` : sql`1 = 1`);
  // SQLite: the rows a long read visits let it be interrupted (its client gone); PostgreSQL
  // cancels the backend's statement instead (db/cancellation.ts).
  const alive = (rowId: string) => (engine === 'sqlite' ? sql.raw(livenessCheck(rowId)) : sql`1 = 1`);
  const sqliteIndexMatch = (query: MatchQuery) => (query.match.narrowing?.engine === 'sqlite' ? query.match.narrowing.match : null);

  /**
   * The matching rows of `messages m` with id in (above, upTo], as a FROM clause and a WHERE
   * condition. On SQLite the trigram index drives the join: FTS5 streams its rowids in order and
   * each is looked up once, where `m.id in (subquery)` would first copy them all into a
   * temporary b-tree.
   */
  function matchSource(query: MatchQuery, range: { above: number; upTo: number }, useIndex = true) {
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
  }

  /** Contiguous id ranges covering (0, maxMessageId], one per reader when the work is worth splitting. */
  function idRanges(query: MatchQuery): { above: number; upTo: number }[] {
    const expectedRows = query.match.share * query.maxMessageId;
    const parts = expectedRows < tuning.splitFromRows ? 1 : deps.readerSlots;
    const step = Math.ceil(query.maxMessageId / parts);
    return Array.from({ length: parts }, (_, i) => ({ above: i * step, upTo: Math.min(query.maxMessageId, (i + 1) * step) }));
  }

  /** Sums per-range results that the readers compute side by side. */
  async function overRanges<T>(query: MatchQuery, part: (range: { above: number; upTo: number }) => Promise<T[]>): Promise<T[]> {
    return (await Promise.all(idRanges(query).map(part))).flat();
  }

  /**
   * SQLite, a query the index answers whole: the matches of each channel from the index and a
   * narrow (id, channel_id) index, without reading a message.
   */
  function channelCountsFromIndex(query: MatchQuery, match: string) {
    return overRanges(query, async (range) => {
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
      where exists (select 1 from messages m where m.channel_id = c.id and m.id <= ${query.maxMessageId})`.execute(reader);
    const unsettled = rows.filter((row) => Number(row.found) !== 1);
    const found = rows.length - unsettled.length;
    if (unsettled.length === 0) return found;
    const ids = sql.join(unsettled.map((row) => Number(row.id)));
    const unsettledMessages = unsettled.reduce((sum, row) => sum + Number(row.size), 0);
    const { rows: more } =
      unsettledMessages * tuning.rowCostInIndexEntries < total
        ? await sql<{ n: number }>`
            select count(*) as n from channels c where c.id in (${ids}) and exists (
              select 1 from messages m where m.channel_id = c.id and m.id <= ${query.maxMessageId} and ${query.match.exact})`.execute(reader)
        : await sql<{ n: number }>`
            select count(distinct m.channel_id) as n
            from messages_fts f cross join messages m indexed by messages_id_channel_idx on m.id = f.rowid
            where f.messages_fts match ${match} and f.rowid <= ${integer(query.maxMessageId)} and m.channel_id in (${ids})`.execute(reader);
    return found + Number(more[0]?.n ?? 0);
  }

  return {
    async maxMessageId(): Promise<number> {
      const row = await reader.selectFrom('messages').select((eb) => eb.fn.max('id').as('max')).executeTakeFirst();
      return Number(row?.max ?? 0);
    },

    /**
     * The number of matches and of channels with one (and of distinct texts with uniqueOnly),
     * without keeping the matches anywhere. Candidates the index cannot vouch for are read and
     * checked, their channels counted in the same pass; id ranges are counted side by side.
     */
    async count(query: MatchQuery, uniqueOnly: boolean): Promise<MatchCounts> {
      if (uniqueOnly) {
        const { from, where } = matchSource(query, { above: 0, upTo: query.maxMessageId });
        const { rows } = await sql<MatchCounts>`
          select count(*) as total, count(distinct m.channel_id) as channels, count(distinct m.text_hash) as groups
          from ${from} where ${where}`.execute(reader);
        const row = rows[0]!;
        return { total: Number(row.total), channels: Number(row.channels), groups: Number(row.groups) };
      }
      const indexMatch = query.match.complete ? sqliteIndexMatch(query) : null;
      // Many matches expected: counted from the index alone, then the channels probed. Few:
      // counted with their channels in one pass.
      if (indexMatch && !query.channelIds?.length && query.match.share * query.maxMessageId > tuning.channelsFromMatches) {
        const totals = await overRanges(query, async (range) => {
          const { rows } = await sql<{ n: number }>`
            select count(*) as n from messages_fts
            where messages_fts match ${indexMatch} and rowid > ${integer(range.above)} and rowid <= ${integer(range.upTo)} and ${alive('rowid')}`.execute(reader);
          return rows;
        });
        const total = totals.reduce((sum, row) => sum + Number(row.n), 0);
        if (total > tuning.channelsFromMatches) return { total, channels: await probeChannels(query, indexMatch, total), groups: total };
      }
      const perChannel = indexMatch
        ? await channelCountsFromIndex(query, indexMatch)
        : await overRanges(query, async (range) => {
            const { from, where } = matchSource(query, range);
            const { rows } = await sql<{ channel_id: number; n: number }>`
              select m.channel_id, count(*) as n from ${from} where ${where} group by m.channel_id`.execute(reader);
            return rows;
          });
      const total = perChannel.reduce((sum, row) => sum + Number(row.n), 0);
      return { total, channels: new Set(perChannel.map((row) => Number(row.channel_id))).size, groups: total };
    },

    /** The keys of one page of matches, newest first, optionally after a known row (keyset). */
    async page(query: MatchQuery, options: { plan: PagePlan; uniqueOnly: boolean; offset: number; limit: number; after?: OrderKey }): Promise<OrderKey[]> {
      const range = { above: 0, upTo: query.maxMessageId };
      if (options.uniqueOnly) {
        // The newest message of each distinct text stands for it.
        const { from, where } = matchSource(query, range);
        const { rows } = await sql<OrderKey>`
          select g.id, g.date from (
            select m.id, m.date, row_number() over (partition by m.text_hash order by m.date desc, m.id desc) as n
            from ${from} where ${where}) g
          where g.n = 1 and ${options.after ? sql`(g.date, g.id) < (${options.after.date}, ${options.after.id})` : sql`1 = 1`}
          order by g.date desc, g.id desc limit ${options.limit} offset ${options.offset}`.execute(reader);
        return rows;
      }
      if (options.plan === 'walk') {
        const { from, where } = matchSource(query, range, false);
        const indexed = engine === 'sqlite' ? sql`${from} indexed by messages_date_idx` : from;
        const { rows } = await sql<OrderKey>`
          select m.id, m.date from ${indexed} where ${where} and ${keysetCondition(options.after)}
          order by m.date desc, m.id desc limit ${options.limit} offset ${options.offset}`.execute(reader);
        return rows;
      }
      const { from, where } = matchSource(query, range);
      // PostgreSQL: the OFFSET 0 fence keeps the planner from walking the date index for a rare
      // term. SQLite's CROSS JOIN already puts the trigram index first.
      const fence = engine === 'postgres' ? sql`offset 0` : sql``;
      const { rows } = await sql<OrderKey>`
        select s.id, s.date from (select m.id, m.date from ${from} where ${where} and ${keysetCondition(options.after)} ${fence}) s
        order by s.date desc, s.id desc limit ${options.limit} offset ${options.offset}`.execute(reader);
      return rows;
    },

    /** The messages of these ids with their channels' names, in the order given. */
    async messages(keys: OrderKey[]): Promise<MessageRow[]> {
      if (keys.length === 0) return [];
      const { rows } = await sql<MessageRow>`
        select m.id, m.message_id, m.channel_id, m.user_id, m.text, m.text_hash, m.date, m.has_media,
               m.media_type, m.file_name, m.links, c.username, c.title
        from messages m join channels c on c.id = m.channel_id
        where m.id in (${sql.join(keys.map((k) => k.id))})`.execute(reader);
      const byId = new Map(rows.map((row) => [Number(row.id), row]));
      return keys.map((key) => byId.get(Number(key.id))!);
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
