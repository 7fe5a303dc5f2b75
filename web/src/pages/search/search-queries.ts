import { infiniteQueryOptions } from '@tanstack/react-query';
import { scopedKey } from '../../api/api-context.tsx';
import { unwrap, type Api } from '../../api/client.ts';
import type { SessionState } from '../../api/session.ts';
import type { SearchResponse } from '../../api/types.ts';

export const PAGE_SIZE = 20;

/**
 * The results of a recorded search, read page by page through messenger-search-history-results:
 * the search as it ran (at its watermark), so "load more" continues the same list however many
 * messages arrived since, without running (and counting) a new search. Shared by the page and
 * its route's loader, which starts the request while the page's code loads.
 */
export function searchResultsQuery(api: Api, session: SessionState | null, historyId: number) {
  return infiniteQueryOptions({
    queryKey: scopedKey(session, 'search-results', historyId),
    queryFn: ({ pageParam }) =>
      unwrap(
        api.client.GET('/service/messenger-search-history-results/{history_id}/', {
          params: { path: { history_id: historyId }, query: { page: pageParam, page_size: PAGE_SIZE } },
        }),
      ),
    initialPageParam: 1,
    getNextPageParam: (last: SearchResponse) => (last.page < last.total_pages ? last.page + 1 : undefined),
    // A recorded search reads the same forever.
    staleTime: Infinity,
  });
}
