/**
 * The search page's address: the form's state and the search shown, so a search can be
 * bookmarked, shared, reloaded (it re-reads the recorded search, it does not run it again) and
 * re-opened from history: `/search?q="fresh logs"&channels=[3,7]&unique=true&context=200&history=42`.
 */
export interface SearchPageSearch {
  q?: string;
  channels?: number[];
  unique?: boolean;
  context?: number;
  /** The recorded search whose results are shown (search_history_id). */
  history?: number;
}

const positiveInteger = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : undefined;

export function validateSearchPageSearch(raw: Record<string, unknown>): SearchPageSearch {
  const channels = Array.isArray(raw.channels)
    ? raw.channels.map(positiveInteger).filter((id) => id !== undefined)
    : [];
  const search: SearchPageSearch = {};
  if (typeof raw.q === 'string' && raw.q) search.q = raw.q;
  if (channels.length) search.channels = channels;
  if (raw.unique === true) search.unique = true;
  const context = positiveInteger(raw.context);
  if (context) search.context = context;
  const history = positiveInteger(raw.history);
  if (history) search.history = history;
  return search;
}

export interface HistorySearch {
  page?: number;
}

export function validateHistorySearch(raw: Record<string, unknown>): HistorySearch {
  const page = positiveInteger(raw.page);
  return page && page > 1 ? { page } : {};
}
