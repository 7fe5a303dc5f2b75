import { cancellable } from '../../db/cancellation.ts';
import type { OrderKey } from './match-source.ts';
import { positiveTerms, textPreview } from '../sources/index.ts';
import type { SearchPlanner } from './search-plan.ts';
import { messageDetails, type MessageRow } from '../sources/messenger/index.ts';
import { pagePlan, type SearchRepository } from './search.repository.ts';
import type { ExportItem, RecordedSearch } from './search.types.ts';

/** A search's query as the store runs it, and how many messages it covers (SearchPlanner.matchQuery). */
export type PlannedQuery = Awaited<ReturnType<SearchPlanner['matchQuery']>>;
/**
 * Whether a new search's page can be read while its count runs: a walk (the plan of a query no
 * index narrows, whatever the total: `pagePlan`) over a channel filter read first, which reads
 * at most those channels' rows. A walk of every message for a rare term the index cannot narrow
 * would read them all, where the count's total of 0 spares it.
 */
export const pageBesideCount = (planned: PlannedQuery) =>
  planned.query.match.narrowing === null && planned.query.channelsFirst === true;

/** A search as recorded, before its history entry has an id. */
type CountedSearch = Omit<RecordedSearch, 'historyId'>;

/** Rows an export reads per query: it goes on after the last row of the batch before (keyset). */
const EXPORT_BATCH = 500;
/** Re-read positions remembered (see `bookmarks`). */
const BOOKMARKS = 1000;

/** Reads a recorded search's results again, exactly as they were when it ran. */
export function createRecordedSearchReader(deps: { searches: SearchRepository; planner: SearchPlanner }) {
  const { searches, planner } = deps;

  /**
   * Where the last page read of a history entry ended (its position and the row's order key),
   * so that the next page starts after that row instead of skipping every row before it: paging
   * through a broad search costs a page per page. Per process and bounded; a miss only costs
   * the skip.
   */
  const bookmarks = new Map<number, { position: number; key: OrderKey }>();

  async function items(rows: MessageRow[], recorded: CountedSearch): Promise<ExportItem[]> {
    const { parse, options, watermark } = recorded;
    const previewTerms = positiveTerms(parse.tree);
    const channelLists = options.unique_only
      ? await searches.channelsOfTexts(
          [...new Set(rows.map((r) => r.text_hash))],
          watermark,
          options.channel_ids ?? undefined,
        )
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
        ...messageDetails(row),
        channel_count: list.length,
        channels_list: list,
      };
    });
  }

  /** The query run again below the watermark. */
  const recordedQuery = (recorded: CountedSearch): Promise<PlannedQuery> =>
    planner.matchQuery(recorded.parse.tree, recorded.options.channel_ids, {
      watermark: recorded.watermark,
      checked: false,
    });

  /** The rows `from` (0-based) to `from + limit`, newest first, read on from `start` when given. */
  async function pageRows(
    recorded: CountedSearch,
    planned: PlannedQuery,
    from: number,
    limit: number,
    start: { position: number; key: OrderKey } | null,
  ): Promise<MessageRow[]> {
    if (from >= recorded.total) return [];
    const { query, scope } = planned;
    const offset = from - (start?.position ?? 0);
    const plan = pagePlan({ total: recorded.total, scope, offset, limit, narrowed: query.match.narrowing !== null });
    return searches.pageRows(query, {
      plan,
      uniqueOnly: recorded.options.unique_only,
      offset,
      limit,
      after: start?.key,
    });
  }

  function bookmark(historyId: number, from: number, rows: MessageRow[]) {
    const last = rows.at(-1);
    if (!last) return;
    bookmarks.delete(historyId);
    bookmarks.set(historyId, { position: from + rows.length, key: { id: Number(last.id), date: Number(last.date) } });
    if (bookmarks.size > BOOKMARKS) bookmarks.delete(bookmarks.keys().next().value!);
  }

  /** The results of these rows, without the full texts. */
  async function pageItems(recorded: CountedSearch, rows: MessageRow[]) {
    return (await items(rows, recorded)).map(({ text: _text, ...item }) => item);
  }

  return {
    /**
     * One page of results, without the full texts, from the nearest bookmark at or before
     * `from`.
     */
    async page(recorded: RecordedSearch, from: number, limit: number) {
      const mark = bookmarks.get(recorded.historyId);
      const start = mark && mark.position <= from ? mark : null;
      const rows = await pageRows(recorded, await recordedQuery(recorded), from, limit, start);
      bookmark(recorded.historyId, from, rows);
      return pageItems(recorded, rows);
    },

    /** A new search's page (its rows, when `walked` already); `remember` bookmarks it under its entry's id. */
    async firstPage(
      recorded: CountedSearch,
      planned: PlannedQuery,
      from: number,
      limit: number,
      walked?: MessageRow[],
    ) {
      const rows = walked ?? (await pageRows(recorded, planned, from, limit, null));
      return {
        results: await pageItems(recorded, rows),
        remember: (historyId: number) => bookmark(historyId, from, rows),
      };
    },

    /**
     * The newest `limit` results, full text included, read batch by batch as the export is
     * written (each batch after the last row of the one before), so a large export never sits
     * in memory whole. Each batch is read cancellable: the stream pulls batches outside the
     * request's context.
     */
    async *exportBatches(recorded: RecordedSearch, limit: number, signal?: AbortSignal): AsyncGenerator<ExportItem[]> {
      const total = Math.min(limit, recorded.total);
      const { query, scope } = await cancellable(signal, () => recordedQuery(recorded));
      let after: OrderKey | undefined;
      for (let read = 0; read < total;) {
        const size = Math.min(EXPORT_BATCH, total - read);
        const plan = pagePlan({
          total: recorded.total,
          scope,
          offset: 0,
          limit: size,
          narrowed: query.match.narrowing !== null,
        });
        const batch = await cancellable(signal, async () => {
          const keys = await searches.page(query, {
            plan,
            uniqueOnly: recorded.options.unique_only,
            offset: 0,
            limit: size,
            after,
          });
          return { keys, items: await items(await searches.messages(keys), recorded) };
        });
        if (batch.keys.length === 0) return;
        yield batch.items;
        read += batch.keys.length;
        after = batch.keys[batch.keys.length - 1];
      }
    },

    /** A deleted entry's bookmark goes with it. */
    forget: (historyId: number) => bookmarks.delete(historyId),
  };
}
