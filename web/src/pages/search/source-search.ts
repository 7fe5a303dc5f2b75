/**
 * The source search page's address: the search shown, so it can be bookmarked, shared and
 * reloaded: `/search/sources?service=5&args={"domain":"acme.com"}&from=…&to=…&page=2`. With a
 * service, from and to it runs (through the rule preview, docs/api.md "Pause, run now, preview").
 */
export interface SourceSearchSearch {
  /** Catalog service id (spec 2.9). */
  service?: number;
  args?: Record<string, unknown>;
  /** The window `(from, to]`, ISO 8601. */
  from?: string;
  to?: string;
  page?: number;
}

const positiveInteger = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : undefined;

/** An ISO moment as given, or undefined: the server states what is wrong with a bad window. */
const moment = (value: unknown): string | undefined =>
  typeof value === 'string' && !Number.isNaN(Date.parse(value)) ? value : undefined;

export function validateSourceSearchSearch(raw: Record<string, unknown>): SourceSearchSearch {
  const search: SourceSearchSearch = {};
  const service = positiveInteger(raw.service);
  if (service) search.service = service;
  if (raw.args && typeof raw.args === 'object' && !Array.isArray(raw.args))
    search.args = raw.args as Record<string, unknown>;
  const from = moment(raw.from);
  if (from) search.from = from;
  const to = moment(raw.to);
  if (to) search.to = to;
  const page = positiveInteger(raw.page);
  if (page && page > 1) search.page = page;
  return search;
}

/** The search to run, when the address names one. */
export function sourceSearchRequest(search: SourceSearchSearch) {
  const { service, from, to } = search;
  if (service === undefined || from === undefined || to === undefined) return null;
  return { service, args: search.args ?? {}, from, to };
}
export type SourceSearchRequest = NonNullable<ReturnType<typeof sourceSearchRequest>>;
