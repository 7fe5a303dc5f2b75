import type { Kysely, Selectable } from 'kysely';
import { cancellable, uncancellable } from '../../db/cancellation.ts';
import type { Database, SearchHistoryTable } from '../../db/schema.ts';
import type { ReadRouter } from '../../db/read-replicas.ts';
import type { Engine } from '../../db/store.ts';
import { DAY_MS, type Clock } from '../../lib/clock.ts';
import { notFound } from '../../lib/errors.ts';
import type { ChannelRepository } from './channel.repository.ts';
import type { FollowUpTokens } from './follow-up-token.ts';
import { formatQuery, type TrigramStats } from '../sources/index.ts';
import { createRecordedSearchReader } from './recorded-search.ts';
import { createSearchHistoryRepository } from './search-history.repository.ts';
import { SEARCH_LIMITS } from './search-limits.ts';
import { createSearchPlanner, parseSearchQuery, searchWarning, type WordLookup } from './search-plan.ts';
import type { SearchRepository } from './search.repository.ts';
import type { RecordedSearch, SearchOptions, SearchRequest, StoredParse } from './search.types.ts';

type HistoryRow = Selectable<SearchHistoryTable>;
type StoredParseWithText = StoredParse & { normalized: string };

const pageCount = (total: number, pageSize: number) => Math.ceil(total / pageSize);

/** A history entry as its row keeps it: the search as it ran, to re-read it exactly. */
function recordedSearch(row: HistoryRow) {
  const parse = JSON.parse(row.parsed_query) as StoredParseWithText;
  const options = JSON.parse(row.options) as SearchOptions;
  const recorded: RecordedSearch = {
    historyId: Number(row.id),
    parse,
    options,
    watermark: Number(row.watermark_message_id),
    total: Number(row.total_matches),
    readLsn: row.read_lsn ?? null,
  };
  return { parse, options, recorded };
}

const queryInfo = (query: string, parse: StoredParseWithText) => ({
  query,
  parsed: parse.tree,
  normalized: parse.normalized,
  terms: parse.terms,
  truncated: parse.truncated,
});

/** A history entry as the history list shows it; `mine` when the asking user made it. */
function historyEntry(row: HistoryRow, userId: number) {
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
    mine: Number(row.user_id) === userId,
  };
}

type SearchHistory = ReturnType<typeof createSearchHistoryRepository>;

async function requireHistory(history: SearchHistory, orgId: number, historyId: number) {
  const row = await history.find(orgId, historyId);
  if (!row) throw notFound('search history entry');
  return { row, ...recordedSearch(row) };
}

/** The organization's recorded searches: listed, exported, deleted, pruned. */
/** Each step of `batches` read where `reads.at(lsn)` sends it: the stream pulls them outside any request's context. */
async function* readAt<T>(reads: ReadRouter, lsn: string | null, batches: AsyncGenerator<T>): AsyncGenerator<T> {
  try {
    for (;;) {
      const step = await reads.at(lsn, () => batches.next());
      if (step.done) return;
      yield step.value;
    }
  } finally {
    await batches.return(undefined);
  }
}

function historyActions({
  history,
  reader,
  reads,
}: {
  history: SearchHistory;
  reader: ReturnType<typeof createRecordedSearchReader>;
  reads: ReadRouter;
}) {
  return {
    /** Deletes one of the user's own searches; another user's or organization's is not found. */
    async deleteHistory(context: { orgId: number; userId: number }, historyId: number) {
      if (!(await history.deleteOwn(context, historyId))) throw notFound('search history entry');
      reader.forget(historyId);
    },

    /** Removes the searches made more than `retentionDays` before `now` (0: keeps them all); how many went. */
    async pruneHistory(now: Date, retentionDays: number): Promise<number> {
      if (retentionDays === 0) return 0;
      return history.deleteBefore(now.getTime() - retentionDays * DAY_MS);
    },

    async listHistory(context: { orgId: number; userId: number }, page: number, pageSize: number) {
      const { rows, total } = await history.page(context.orgId, (page - 1) * pageSize, pageSize);
      return {
        items: rows.map((row) => historyEntry(row, context.userId)),
        total,
        page,
        page_size: pageSize,
        total_pages: pageCount(total, pageSize),
      };
    },

    /**
     * A recorded search for export: its summary, and its newest `limit` results, full text
     * included, read batch by batch as the export is written.
     */
    async exportRows(orgId: number, historyId: number, limit: number, signal?: AbortSignal) {
      const { row, parse, recorded } = await requireHistory(history, orgId, historyId);
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
        batches: reads.enabled
          ? readAt(reads, recorded.readLsn, reader.exportBatches(recorded, limit, signal))
          : reader.exportBatches(recorded, limit, signal),
      };
    },
  };
}

export function createSearchService(deps: {
  /** Where searches are recorded (search_history). */
  history: Kysely<Database>;
  engine: Engine;
  /**
   * Where the searches' reads run (a replica or the primary, src/db/read-replicas.ts); the
   * history is always read and written on the primary.
   */
  reads: ReadRouter;
  searches: SearchRepository;
  channels: ChannelRepository;
  followUps: FollowUpTokens;
  trigrams: TrigramStats;
  words?: WordLookup;
  clock: Clock;
}) {
  const { searches, followUps, clock, reads } = deps;
  const history = createSearchHistoryRepository(deps.history);
  const planner = createSearchPlanner({
    engine: deps.engine,
    channels: deps.channels,
    trigrams: deps.trigrams,
    words: deps.words,
  });
  const reader = createRecordedSearchReader({ searches, planner });

  /**
   * One page of a recorded search: the query run again as it ran then. Its reads stop when
   * `signal` aborts (the client went away, docs/api.md "Abandoned requests").
   */
  function readPage(orgId: number, historyId: number, page: number, pageSize: number, signal?: AbortSignal) {
    return cancellable(signal, () => readPageNow(orgId, historyId, page, pageSize));
  }

  async function readPageNow(orgId: number, historyId: number, page: number, pageSize: number) {
    const { row, parse, options, recorded } = await requireHistory(history, orgId, historyId);
    const results = await reads.at(recorded.readLsn, () => reader.page(recorded, (page - 1) * pageSize, pageSize));
    return {
      results,
      total: recorded.total,
      channels_matched: Number(row.channels_matched),
      page,
      page_size: pageSize,
      total_pages: pageCount(recorded.total, pageSize),
      query_info: queryInfo(row.query, parse),
      search_history_id: historyId,
      warning: searchWarning(parse.tree, parse.truncated, recorded.total),
      follow_up_token: await followUps.issue(orgId, historyId, {
        query: row.query,
        ...(options.channel_ids ? { channel_ids: options.channel_ids } : {}),
        unique_only: options.unique_only,
        context_chars: options.context_chars,
      }),
    };
  }

  /** Spec 4.2 (see `search` below); `signal` is the request's, its reads run cancellable by it. */
  async function searchNow(
    context: { orgId: number; userId: number },
    request: SearchRequest,
    signal: AbortSignal | undefined,
  ) {
    // Read on a replica that has everything the primary had when the search came in (a search
    // right after an ingest sees it); the page is then read like a re-read, at the position recorded.
    const historyId = await reads.fresh(() => recordSearch(context, request, signal));
    try {
      const answer = await readPageNow(context.orgId, historyId, request.page ?? 1, request.page_size ?? 10);
      signal?.throwIfAborted();
      return answer;
    } catch (error) {
      // Nobody got the answer: the search is not in the history either.
      if (signal?.aborted) await uncancellable(() => history.delete(historyId));
      throw error;
    }
  }

  /** Counts the matches and records the search: its history id. */
  async function recordSearch(
    context: { orgId: number; userId: number },
    request: SearchRequest,
    signal: AbortSignal | undefined,
  ): Promise<number> {
    const parsed = parseSearchQuery(request.query);
    const channelFilter = await planner.checkedChannels(request.channel_ids);
    const options: SearchOptions = {
      channel_ids: channelFilter?.ids ?? null,
      context_chars: request.context_chars ?? SEARCH_LIMITS.defaultContextChars,
      unique_only: request.unique_only ?? false,
    };
    const stored = {
      tree: parsed.tree,
      terms: parsed.terms,
      truncated: parsed.truncated,
      normalized: formatQuery(parsed.tree),
    };

    const watermark = await searches.maxMessageId();
    // Read after the watermark: every row it saw is replayed wherever the search is read again.
    const readLsn = await reads.position();
    const { query } = await planner.matchQuery(parsed.tree, channelFilter, watermark);
    const counts = await searches.count(query, options.unique_only);
    const total = options.unique_only ? counts.groups : counts.total;
    signal?.throwIfAborted();
    const historyId = await history.insert({
      org_id: context.orgId,
      user_id: context.userId,
      query: parsed.query,
      parsed_query: JSON.stringify(stored),
      options: JSON.stringify(options),
      total_matches: total,
      channels_matched: counts.channels,
      watermark_message_id: watermark,
      searched_at: clock.now().getTime(),
      ...(readLsn ? { read_lsn: readLsn } : {}),
    });
    return historyId;
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
    ...historyActions({ history, reader, reads }),
  };
}

export type SearchService = ReturnType<typeof createSearchService>;
