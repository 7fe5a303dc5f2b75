import type { Kysely, Selectable } from 'kysely';
import { cancellable, uncancellable } from '../../db/cancellation.ts';
import type { Database, SearchHistoryTable } from '../../db/schema.ts';
import type { ReadRouter } from '../../db/read-replicas.ts';
import type { Engine } from '../../db/store.ts';
import { DAY_MS, type Clock } from '../../lib/clock.ts';
import { notFound } from '../../lib/errors.ts';
import type { FollowUpTokens } from './follow-up-token.ts';
import { formatQuery, type TrigramStats } from '../sources/index.ts';
import { createRecordedSearchReader, pageBesideCount } from './recorded-search.ts';
import { createSearchHistoryRepository } from './search-history.repository.ts';
import { SEARCH_LIMITS } from './search-limits.ts';
import { createSearchPlanner, parseSearchQuery, searchWarning } from './search-plan.ts';
import type { SearchRepository } from './search.repository.ts';
import type { MessageItem, RecordedSearch, SearchOptions, SearchRequest, StoredParse } from './search.types.ts';
import type { MessageRow } from '../sources/messenger/index.ts';

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

/** A page of a search as the spec answers it (4.2), with the follow-up token of its history entry. */
function pageAnswer(
  followUps: FollowUpTokens,
  answer: {
    orgId: number;
    historyId: number;
    query: string;
    parse: StoredParseWithText;
    options: SearchOptions;
    total: number;
    channelsMatched: number;
    page: number;
    pageSize: number;
    results: MessageItem[];
  },
) {
  const { query, parse, options, total } = answer;
  return {
    results: answer.results,
    total,
    channels_matched: answer.channelsMatched,
    page: answer.page,
    page_size: answer.pageSize,
    total_pages: pageCount(total, answer.pageSize),
    query_info: queryInfo(query, parse),
    search_history_id: answer.historyId,
    warning: searchWarning(parse.tree, parse.truncated, total),
    follow_up_token: followUps.issue(answer.orgId, answer.historyId, {
      query,
      ...(options.channel_ids ? { channel_ids: options.channel_ids } : {}),
      unique_only: options.unique_only,
      context_chars: options.context_chars,
    }),
  };
}

const searchOptions = (request: SearchRequest, channelIds: number[] | null): SearchOptions => ({
  channel_ids: channelIds,
  context_chars: request.context_chars ?? SEARCH_LIMITS.defaultContextChars,
  unique_only: request.unique_only ?? false,
});

/** The parsed query as the history entry keeps it. */
const storedParse = (parsed: ReturnType<typeof parseSearchQuery>): StoredParseWithText => ({
  tree: parsed.tree,
  terms: parsed.terms,
  truncated: parsed.truncated,
  normalized: formatQuery(parsed.tree),
});

/** A new search's history entry, but for its counts and watermark. */
const newEntry = (
  context: { orgId: number; userId: number },
  query: string,
  parse: StoredParseWithText,
  options: SearchOptions,
  now: Date,
) => ({
  org_id: context.orgId,
  user_id: context.userId,
  query,
  parsed_query: JSON.stringify(parse),
  options: JSON.stringify(options),
  searched_at: now.getTime(),
});

type SearchHistory = ReturnType<typeof createSearchHistoryRepository>;

/**
 * A history entry written while `read` runs: both results, or the first failure. An entry whose
 * read failed because its client went away is deleted again (nobody got the answer).
 */
async function besideHistory<T>(
  history: SearchHistory,
  insert: Promise<number>,
  read: Promise<T>,
  signal: AbortSignal | undefined,
): Promise<[number, T]> {
  const [inserted, page] = await Promise.allSettled([insert, read]);
  if (page.status === 'rejected') {
    if (inserted.status === 'fulfilled' && signal?.aborted) await uncancellable(() => history.delete(inserted.value));
    throw page.reason;
  }
  if (inserted.status === 'rejected') throw inserted.reason;
  return [inserted.value, page.value];
}

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
  followUps: FollowUpTokens;
  trigrams: TrigramStats;
  clock: Clock;
}) {
  const { searches, followUps, clock, reads } = deps;
  const history = createSearchHistoryRepository(deps.history);
  const planner = createSearchPlanner({ engine: deps.engine, searches, trigrams: deps.trigrams });
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
    return pageAnswer(followUps, {
      orgId,
      historyId,
      query: row.query,
      parse,
      options,
      total: recorded.total,
      channelsMatched: Number(row.channels_matched),
      page,
      pageSize,
      results,
    });
  }

  /** Spec 4.2 (see `search` below); `signal` is the request's, its reads run cancellable by it. */
  async function searchNow(
    context: { orgId: number; userId: number },
    request: SearchRequest,
    signal: AbortSignal | undefined,
  ) {
    // Read on a replica that has everything the primary had when the search came in (a search
    // right after an ingest sees it), the page at the position recorded, as a re-read would.
    const searched = await reads.fresh(() => countAndRead(context, request, signal));
    try {
      const answer = pageAnswer(followUps, { orgId: context.orgId, ...searched });
      signal?.throwIfAborted();
      return answer;
    } catch (error) {
      // Nobody got the answer: the search is not in the history either.
      if (signal?.aborted) await uncancellable(() => history.delete(searched.historyId));
      throw error;
    }
  }

  /**
   * Counts the matches, then records the search and reads the requested page side by side: the
   * page is read with the query planned for the count (its lexicon ids, its channels), not
   * planned again from the history entry, which it does not read back either.
   */
  async function countAndRead(
    context: { orgId: number; userId: number },
    request: SearchRequest,
    signal: AbortSignal | undefined,
  ) {
    const parsed = parseSearchQuery(request.query);
    const channelIds = planner.requestedChannels(request.channel_ids);
    const options = searchOptions(request, channelIds);
    const parse = storedParse(parsed);
    const page = request.page ?? 1;
    const pageSize = request.page_size ?? 10;
    const entry = newEntry(context, parsed.query, parse, options, clock.now());
    // On the primary, a channel filter's page and history entry may come with its opening
    // statement (search.repository.ts `oneTripSearch`); a replica cannot write the entry.
    const oneTrip = deps.engine === 'postgres' && !reads.enabled && channelIds !== null && !options.unique_only;
    const planned = await planner.matchQuery(parsed.tree, channelIds, {
      checked: true,
      ...(oneTrip ? { firstPage: { offset: (page - 1) * pageSize, limit: pageSize, record: entry } } : {}),
    });
    const { watermark } = planned;
    // Read after the watermark: every row it saw is replayed wherever the search is read again.
    const readLsn = await reads.position();
    const readPage = (total: number, walked?: MessageRow[]) =>
      reader.firstPage({ parse, options, watermark, total, readLsn }, planned, (page - 1) * pageSize, pageSize, walked);
    // A channel filter's walk reads the same page whatever the total: beside the count, on
    // another reader, unless the opening statement walked it already.
    const early = pageBesideCount(planned)
      ? readPage(Number.POSITIVE_INFINITY, planned.firstPage?.rows ?? undefined)
      : null;
    // Awaited below; a count that fails first must not leave it unhandled.
    early?.catch(() => {});
    const counts = await searches.count(planned.query, options.unique_only);
    const total = options.unique_only ? counts.groups : counts.total;
    signal?.throwIfAborted();
    const recorded = planned.firstPage?.historyId;
    const [historyId, read] = await besideHistory(
      history,
      recorded
        ? Promise.resolve(recorded)
        : history.insert({
            ...entry,
            total_matches: total,
            channels_matched: counts.channels,
            watermark_message_id: watermark,
            ...(readLsn ? { read_lsn: readLsn } : {}),
          }),
      early ?? readPage(total),
      signal,
    );
    read.remember(historyId);
    return {
      historyId,
      query: parsed.query,
      parse,
      options,
      total,
      channelsMatched: counts.channels,
      page,
      pageSize,
      results: read.results,
    };
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
