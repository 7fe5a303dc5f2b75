import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { csvRows } from '../../../../src/lib/csv.ts';
import { useApi, useScopedKey } from '../../api/api-context.tsx';
import { unwrap, type Api } from '../../api/client.ts';
import { saveFile } from '../../api/download.ts';
import type { PresentedHit } from '../incidents/hit-fields.ts';
import type { SourceSearchRequest } from './source-search.ts';

export const SOURCE_SEARCH_PAGE_SIZE = 20;
/** Pages of the preview reach the first 10,000 hits (docs/api.md "Pause, run now, preview"). */
export const SOURCE_SEARCH_CAP = 10_000;
/** The preview's largest page: the fewest requests for an export. */
const EXPORT_PAGE_SIZE = 100;

function previewPage(client: Api['client'], request: SourceSearchRequest, page: number, pageSize: number) {
  return unwrap(
    client.POST('/service/alert_system_rule_preview/', { body: { ...request, page, page_size: pageSize } }),
  );
}

/** One page of a source's hits in a window: the rules' matcher, nothing stored or sent. */
export function useSourceSearch(request: SourceSearchRequest | null, page: number) {
  const { client } = useApi();
  return useQuery({
    queryKey: useScopedKey('source-search', request, page),
    queryFn: async () => {
      const result = await previewPage(client, request!, page, SOURCE_SEARCH_PAGE_SIZE);
      return { ...result, results: result.results as PresentedHit[] };
    },
    enabled: request !== null,
    placeholderData: keepPreviousData,
    // An answer about a past window: asking again gives the same, so no refetch on focus.
    staleTime: Infinity,
  });
}

/** Every hit of the search up to the cap, read page by page. */
async function allHits(client: Api['client'], request: SourceSearchRequest): Promise<PresentedHit[]> {
  const hits: PresentedHit[] = [];
  for (let page = 1; ; page++) {
    const result = await previewPage(client, request, page, EXPORT_PAGE_SIZE);
    hits.push(...(result.results as PresentedHit[]));
    if (result.results.length < EXPORT_PAGE_SIZE || hits.length >= Math.min(result.count, SOURCE_SEARCH_CAP))
      return hits;
  }
}

/** A field as one CSV cell: lists and objects as JSON, absent values empty. */
const cell = (value: unknown): string =>
  value === null || value === undefined
    ? ''
    : typeof value === 'object'
      ? JSON.stringify(value)
      : String(value as string | number | boolean);

/**
 * The hits as CSV, a column per field in the order the hits first give them, each cell
 * neutralised as the server's exports are (src/lib/csv.ts, docs/api.md "CSV exports and formulas").
 */
function hitsCsv(hits: PresentedHit[]): string {
  const columns = [...new Set(hits.flatMap((hit) => Object.keys(hit)))];
  return csvRows([columns, ...hits.map((hit) => columns.map((column) => cell(hit[column])))], { bom: true });
}

export const SOURCE_EXPORT_FORMATS = ['csv', 'json'] as const;
export type SourceExportFormat = (typeof SOURCE_EXPORT_FORMATS)[number];

/** Exports the search's hits (passwords masked as the preview gives them) as a file built here. */
export function useSourceExport(request: SourceSearchRequest | null, sourceName: string) {
  const { client } = useApi();
  return useMutation({
    mutationFn: async (format: SourceExportFormat) => {
      const hits = await allHits(client, request!);
      const name = `dragnet-${sourceName}-${request!.from.slice(0, 10)}-${request!.to.slice(0, 10)}.${format}`;
      const body =
        format === 'csv'
          ? new Blob([hitsCsv(hits)], { type: 'text/csv;charset=utf-8' })
          : new Blob([JSON.stringify({ source: sourceName, ...request, count: hits.length, results: hits }, null, 2)], {
              type: 'application/json',
            });
      saveFile(body, name);
    },
  });
}
