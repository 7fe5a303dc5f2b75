import type { Kysely } from 'kysely';
import { cancellable, uncancellable } from '../../db/cancellation.ts';
import type { Database } from '../../db/schema.ts';
import type { Engine } from '../../db/store.ts';
import { DAY_MS, type Clock } from '../../lib/clock.ts';
import { AppError, notFound, validationError } from '../../lib/errors.ts';
import type { ChannelRepository } from './channel.repository.ts';
import type { FollowUpTokens } from './follow-up-token.ts';
import {
  formatQuery,
  matchCompilers,
  MIN_INDEXED_TERM_LENGTH,
  parseQuery,
  positiveTerms,
  QuerySyntaxError,
  textPreview,
  type QueryNode,
  type TrigramStats,
} from '../sources/index.ts';
import type { MessageRow } from '../sources/messenger/index.ts';
import { pagePlan, type MatchQuery, type OrderKey, type SearchRepository } from './search.repository.ts';

/** docs/api.md "Messenger search": the limits the spec leaves open. */
export const SEARCH_LIMITS = {
  maxPageSize: 100,
  defaultContextChars: 500,
  minContextChars: 10,
  maxContextChars: 5000,
  maxChannelIds: 500,
  /** More matches than this earn a "broad query" warning. */
  broadMatchThreshold: 10_000,
} as const;

/** Rows an export reads per query: it goes on after the last row of the batch before (keyset). */
const EXPORT_BATCH = 500;
/** Re-read positions remembered (see `bookmarks`). */
const BOOKMARKS = 1000;

export interface SearchRequest {
  query: string;
  channel_ids?: number[] | null;
  context_chars?: number;
  unique_only?: boolean;
  page?: number;
  page_size?: number;
}

interface SearchOptions {
  channel_ids: number[] | null;
  context_chars: number;
  unique_only: boolean;
}

interface StoredParse {
  tree: QueryNode;
  terms: string[];
  truncated: boolean;
}

export interface MessageItem {
  message_id: number;
  channel_id: number;
  channel_username: string | null;
  user_id: number | null;
  text_preview: string;
  date: string;
  has_media: boolean;
  media_type: string | null;
  file_name: string | null;
  links: string[] | null;
  channel_count: number;
  channels_list: string[] | null;
}

/** A full message for exports: the preview plus the whole text. */
export interface ExportItem extends MessageItem {
  text: string;
}

interface ChannelFilter {
  ids: number[];
  /** Messages in those channels (all of them, not only up to a watermark: a cost estimate). */
  messages: number;
}

/** What makes a re-read of a history entry exact: the search as it ran, below its watermark. */
interface RecordedSearch {
  historyId: number;
  parse: StoredParse;
  options: SearchOptions;
  watermark: number;
  total: number;
}

export function createSearchService(deps: {
  /** Where searches are recorded (search_history). */
  history: Kysely<Database>;
  engine: Engine;
  searches: SearchRepository;
  channels: ChannelRepository;
  followUps: FollowUpTokens;
  trigrams: TrigramStats;
  clock: Clock;
}) {
  const { history: db, searches, channels, followUps, trigrams, clock } = deps;
  const compile = matchCompilers[deps.engine];

  /**
   * Where the last page read of a history entry ended (its position and the row's order key),
   * so that the next page starts after that row instead of skipping every row before it: paging
   * through a broad search costs a page per page. Per process and bounded; a miss only costs
   * the skip.
   */
  const bookmarks = new Map<number, { position: number; key: OrderKey }>();

  function parseOrReject(query: string) {
    try {
      return parseQuery(query);
    } catch (error) {
      if (error instanceof QuerySyntaxError) {
        throw new AppError('validation_failed', `query: ${error.message}`, {
          fields: [{ field: 'query', message: error.message }],
          extra: { position: error.position },
        });
      }
      throw error;
    }
  }

  /** Channels to search in and how many messages they hold together. */
  async function channelScope(ids: number[]) {
    const known = await channels.messageCounts(ids);
    return { ids, known, messages: [...known.values()].reduce((sum, n) => sum + n, 0) };
  }

  /** The requested channels, deduplicated and checked. */
  async function checkedChannels(ids: number[] | null | undefined): Promise<ChannelFilter | null> {
    if (!ids || ids.length === 0) return null;
    const unique = [...new Set(ids)];
    if (unique.length > SEARCH_LIMITS.maxChannelIds) {
      throw validationError('channel_ids', `at most ${SEARCH_LIMITS.maxChannelIds} channels`);
    }
    const scope = await channelScope(unique);
    const unknown = unique.filter((id) => !scope.known.has(id));
    if (unknown.length) throw validationError('channel_ids', `unknown channel ids: ${unknown.join(', ')}`);
    return scope;
  }

  /**
   * The search as the store runs it, and how many messages it covers. When the chosen channels
   * hold fewer messages than the index would return, reading those channels' messages directly
   * (through the channel index) is the cheaper plan.
   */
  async function matchQuery(tree: QueryNode, channelFilter: ChannelFilter | null, watermark: number) {
    const { rarity, messages } = await trigrams.estimate(watermark);
    let match = compile(tree, { rarity });
    if (channelFilter && channelFilter.messages <= match.share * messages) match = compile(tree, { rarity, withoutIndex: true });
    const query: MatchQuery = { match, channelIds: channelFilter?.ids, maxMessageId: watermark };
    return { query, scope: channelFilter?.messages ?? watermark };
  }

  function warningFor(tree: QueryNode, truncated: boolean, total: number): string | null {
    const notes: string[] = [];
    if (truncated) notes.push('query truncated to its first terms (at most 64 terms and 1000 characters)');
    const short = positiveTerms(tree).filter((t) => [...t].length < MIN_INDEXED_TERM_LENGTH);
    const positives = positiveTerms(tree);
    if (positives.length === 0) notes.push('broad query: it only excludes terms, so it matches almost every message');
    if (short.length) {
      notes.push(`broad query: terms shorter than ${MIN_INDEXED_TERM_LENGTH} characters (${short.map((t) => JSON.stringify(t)).join(', ')}) match as substrings almost anywhere`);
    }
    if (total > SEARCH_LIMITS.broadMatchThreshold) {
      notes.push(`broad query: ${total} matches (more than ${SEARCH_LIMITS.broadMatchThreshold}); add terms to narrow it`);
    }
    return notes.length ? notes.join('; ') : null;
  }

  async function toItems(rows: MessageRow[], parse: StoredParse, options: SearchOptions, watermark: number): Promise<ExportItem[]> {
    const previewTerms = positiveTerms(parse.tree);
    const channelLists = options.unique_only
      ? await searches.channelsOfTexts([...new Set(rows.map((r) => r.text_hash))], watermark, options.channel_ids ?? undefined)
      : null;
    return rows.map((row) => {
      const ownChannel = row.username ?? row.title;
      const list = channelLists?.get(row.text_hash) ?? [ownChannel];
      return {
        message_id: Number(row.message_id),
        channel_id: Number(row.channel_id),
        channel_username: row.username,
        user_id: row.user_id === null ? null : Number(row.user_id),
        text_preview: textPreview(row.text, previewTerms, options.context_chars),
        text: row.text,
        date: new Date(Number(row.date)).toISOString(),
        has_media: Number(row.has_media) === 1,
        media_type: row.media_type,
        file_name: row.file_name,
        links: row.links ? (JSON.parse(row.links) as string[]) : null,
        channel_count: list.length,
        channels_list: list,
      };
    });
  }

  const pageCount = (total: number, pageSize: number) => Math.ceil(total / pageSize);

  /**
   * Rows `from` (0-based) to `from + limit` of a recorded search, newest first: the query run
   * again below the watermark, from the nearest bookmark at or before `from`.
   */
  async function recordedQuery(recorded: RecordedSearch) {
    const channelFilter = recorded.options.channel_ids ? await channelScope(recorded.options.channel_ids) : null;
    return matchQuery(recorded.parse.tree, channelFilter, recorded.watermark);
  }

  async function readRows(recorded: RecordedSearch, from: number, limit: number): Promise<MessageRow[]> {
    if (from >= recorded.total) return [];
    const { query, scope } = await recordedQuery(recorded);
    const mark = bookmarks.get(recorded.historyId);
    const start = mark && mark.position <= from ? mark : null;
    const offset = from - (start?.position ?? 0);
    const plan = pagePlan({ total: recorded.total, scope, offset, limit, narrowed: query.match.narrowing !== null });
    const keys = await searches.page(query, { plan, uniqueOnly: recorded.options.unique_only, offset, limit, after: start?.key });
    if (keys.length) {
      bookmarks.delete(recorded.historyId);
      bookmarks.set(recorded.historyId, { position: from + keys.length, key: keys[keys.length - 1]! });
      if (bookmarks.size > BOOKMARKS) bookmarks.delete(bookmarks.keys().next().value!);
    }
    return searches.messages(keys);
  }

  async function requireHistory(orgId: number, historyId: number) {
    const row = await db
      .selectFrom('search_history')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('id', '=', historyId)
      .executeTakeFirst();
    if (!row) throw notFound('search history entry');
    const parse = JSON.parse(row.parsed_query) as StoredParse & { normalized: string };
    const options = JSON.parse(row.options) as SearchOptions;
    const recorded: RecordedSearch = { historyId, parse, options, watermark: Number(row.watermark_message_id), total: Number(row.total_matches) };
    return { row, parse, options, recorded };
  }

  const queryInfo = (query: string, parse: StoredParse & { normalized: string }) => ({
    query,
    parsed: parse.tree,
    normalized: parse.normalized,
    terms: parse.terms,
    truncated: parse.truncated,
  });

  /**
   * One page of a recorded search: the query run again as it ran then. Its reads stop when
   * `signal` aborts (the client went away, docs/api.md "Abandoned requests").
   */
  function readPage(orgId: number, historyId: number, page: number, pageSize: number, signal?: AbortSignal) {
    return cancellable(signal, () => readPageNow(orgId, historyId, page, pageSize));
  }

  async function readPageNow(orgId: number, historyId: number, page: number, pageSize: number) {
    const { row, parse, options, recorded } = await requireHistory(orgId, historyId);
    const rows = await readRows(recorded, (page - 1) * pageSize, pageSize);
    const results = (await toItems(rows, parse, options, recorded.watermark)).map(({ text: _text, ...item }) => item);
    return {
      results,
      total: recorded.total,
      channels_matched: Number(row.channels_matched),
      page,
      page_size: pageSize,
      total_pages: pageCount(recorded.total, pageSize),
      query_info: queryInfo(row.query, parse),
      search_history_id: historyId,
      warning: warningFor(parse.tree, parse.truncated, recorded.total),
      follow_up_token: await followUps.issue(orgId, historyId, {
        query: row.query,
        ...(options.channel_ids ? { channel_ids: options.channel_ids } : {}),
        unique_only: options.unique_only,
        context_chars: options.context_chars,
      }),
    };
  }

  /** Spec 4.2 (see `search` below); `signal` is the request's, its reads run cancellable by it. */
  async function searchNow(context: { orgId: number; userId: number }, request: SearchRequest, signal: AbortSignal | undefined) {
    const parsed = parseOrReject(request.query);
    const channelFilter = await checkedChannels(request.channel_ids);
    const options: SearchOptions = {
      channel_ids: channelFilter?.ids ?? null,
      context_chars: request.context_chars ?? SEARCH_LIMITS.defaultContextChars,
      unique_only: request.unique_only ?? false,
    };
    const stored = { tree: parsed.tree, terms: parsed.terms, truncated: parsed.truncated, normalized: formatQuery(parsed.tree) };

    const watermark = await searches.maxMessageId();
    const { query } = await matchQuery(parsed.tree, channelFilter, watermark);
    const counts = await searches.count(query, options.unique_only);
    const total = options.unique_only ? counts.groups : counts.total;
    signal?.throwIfAborted();
    const inserted = await db
      .insertInto('search_history')
      .values({
        org_id: context.orgId,
        user_id: context.userId,
        query: parsed.query,
        parsed_query: JSON.stringify(stored),
        options: JSON.stringify(options),
        total_matches: total,
        channels_matched: counts.channels,
        watermark_message_id: watermark,
        searched_at: clock.now().getTime(),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const historyId = Number(inserted.id);
    try {
      const answer = await readPageNow(context.orgId, historyId, request.page ?? 1, request.page_size ?? 10);
      signal?.throwIfAborted();
      return answer;
    } catch (error) {
      // Nobody got the answer: the search is not in the history either.
      if (signal?.aborted) await uncancellable(() => db.deleteFrom('search_history').where('id', '=', historyId).execute());
      throw error;
    }
  }

  return {
    /**
     * Spec 4.2: counts the matches and records the search (its query, options and watermark,
     * not its matches), then answers with the requested page read like any later re-read. A
     * search whose `signal` aborts (its client went away) stops reading and is not recorded.
     */
    search(context: { orgId: number; userId: number }, request: SearchRequest, signal?: AbortSignal) {
      return cancellable(signal, () => searchNow(context, request, signal));
    },

    readPage,

    /** Deletes one of the user's own searches; another user's or organization's is not found. */
    async deleteHistory(context: { orgId: number; userId: number }, historyId: number) {
      const deleted = await db
        .deleteFrom('search_history')
        .where('org_id', '=', context.orgId)
        .where('user_id', '=', context.userId)
        .where('id', '=', historyId)
        .executeTakeFirst();
      if (Number(deleted.numDeletedRows) === 0) throw notFound('search history entry');
      bookmarks.delete(historyId);
    },

    /** Removes the searches made more than `retentionDays` before `now` (0: keeps them all); how many went. */
    async pruneHistory(now: Date, retentionDays: number): Promise<number> {
      if (retentionDays === 0) return 0;
      const deleted = await db
        .deleteFrom('search_history')
        .where('searched_at', '<', now.getTime() - retentionDays * DAY_MS)
        .executeTakeFirst();
      return Number(deleted.numDeletedRows);
    },

    async listHistory(context: { orgId: number; userId: number }, page: number, pageSize: number) {
      const base = db.selectFrom('search_history').where('org_id', '=', context.orgId);
      const { total } = await base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
      const rows = await base
        .selectAll()
        .orderBy('searched_at', 'desc')
        .orderBy('id', 'desc')
        .offset((page - 1) * pageSize)
        .limit(pageSize)
        .execute();
      return {
        items: rows.map((row) => {
          const parse = JSON.parse(row.parsed_query) as { normalized: string };
          const options = JSON.parse(row.options) as SearchOptions;
          return {
            id: Number(row.id),
            query: row.query,
            parsed_query: parse.normalized,
            total_matches: Number(row.total_matches),
            channels_matched: Number(row.channels_matched),
            searched_at: new Date(Number(row.searched_at)).toISOString(),
            channel_ids: options.channel_ids,
            unique_only: options.unique_only,
            context_chars: options.context_chars,
            mine: Number(row.user_id) === context.userId,
          };
        }),
        total: Number(total),
        page,
        page_size: pageSize,
        total_pages: pageCount(Number(total), pageSize),
      };
    },

    /**
     * A recorded search for export: its summary, and its newest `limit` results, full text
     * included, read batch by batch as the export is written (each batch after the last row of
     * the one before), so a large export never sits in memory whole.
     */
    async exportRows(orgId: number, historyId: number, limit: number, signal?: AbortSignal) {
      const { row, parse, options, recorded } = await requireHistory(orgId, historyId);
      // Each batch is read cancellable: the stream pulls batches outside the request's context.
      async function* items(): AsyncGenerator<ExportItem[]> {
        const total = Math.min(limit, recorded.total);
        const { query, scope } = await cancellable(signal, () => recordedQuery(recorded));
        let after: OrderKey | undefined;
        for (let read = 0; read < total; ) {
          const size = Math.min(EXPORT_BATCH, total - read);
          const plan = pagePlan({ total: recorded.total, scope, offset: 0, limit: size, narrowed: query.match.narrowing !== null });
          const batch = await cancellable(signal, async () => {
            const keys = await searches.page(query, { plan, uniqueOnly: options.unique_only, offset: 0, limit: size, after });
            return { keys, items: await toItems(await searches.messages(keys), parse, options, recorded.watermark) };
          });
          if (batch.keys.length === 0) return;
          yield batch.items;
          read += batch.keys.length;
          after = batch.keys[batch.keys.length - 1];
        }
      }
      return {
        history: {
          id: historyId,
          query: row.query,
          parsed_query: parse.normalized,
          total_matches: recorded.total,
          channels_matched: Number(row.channels_matched),
          searched_at: new Date(Number(row.searched_at)).toISOString(),
        },
        listed: Math.min(limit, recorded.total),
        batches: items(),
      };
    },
  };
}

export type SearchService = ReturnType<typeof createSearchService>;
