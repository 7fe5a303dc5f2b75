import { infiniteQueryOptions, keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { scopedKey, useApi, useScopedKey, useSession } from '../../api/api-context.tsx';
import { unwrap, type Api } from '../../api/client.ts';
import { filenameFrom, saveFile } from '../../api/download.ts';
import { ApiError } from '../../api/errors.ts';
import type { SessionState } from '../../api/session.ts';
import type { SearchResponse } from '../../api/types.ts';

const PAGE_SIZE = 20;

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

interface SearchRequest {
  query: string;
  channel_ids: number[] | null;
  context_chars?: number;
  unique_only: boolean;
}

/**
 * Runs a search (POST messenger-search-create) and seeds the results cache with its first page,
 * so the recorded search's page shows without asking again; the history list is read again.
 */
export function useRunSearch(onSearched: (response: SearchResponse, request: SearchRequest) => void) {
  const api = useApi();
  const session = useSession();
  const queryClient = useQueryClient();
  const scope = useScopedKey();
  return useMutation({
    mutationFn: (body: SearchRequest) =>
      unwrap(
        api.client.POST('/service/messenger-search-create/', { body: { ...body, page: 1, page_size: PAGE_SIZE } }),
      ),
    onSuccess: (response, body) => {
      queryClient.setQueryData(searchResultsQuery(api, session, response.search_history_id).queryKey, {
        pages: [response],
        pageParams: [1],
      });
      void queryClient.invalidateQueries({ queryKey: [...scope, 'search-history'] });
      onSearched(response, body);
    },
  });
}

const HISTORY_PAGE_SIZE = 20;

/** The organization's past searches, newest first, a page at a time. */
export function useSearchHistory(page: number) {
  const { client } = useApi();
  return useQuery({
    queryKey: [...useScopedKey('search-history'), page],
    queryFn: () =>
      unwrap(
        client.GET('/service/messenger-search-history/', { params: { query: { page, page_size: HISTORY_PAGE_SIZE } } }),
      ),
    placeholderData: keepPreviousData,
  });
}

/** Deletes a recorded search (its author's right), then reads the history again. */
export function useDeleteSearch() {
  const { client } = useApi();
  const queries = useQueryClient();
  const historyKey = useScopedKey('search-history');
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(
        client.DELETE('/service/messenger-search-history/{history_id}/', { params: { path: { history_id: id } } }),
      ),
    onSuccess: () => queries.invalidateQueries({ queryKey: historyKey }),
  });
}

export const EXPORT_FORMATS = ['csv', 'json', 'xml', 'pdf'] as const;
type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** Downloads a recorded search in one export format (every match, full texts) and saves it as a file. */
export function useSearchExport(historyId: number) {
  const { client } = useApi();
  return useMutation({
    mutationFn: async (format: ExportFormat) => {
      const { data, error, response } = await client.GET('/service/messenger-search-history-export/{history_id}/', {
        params: { path: { history_id: historyId }, query: { format } },
        parseAs: 'blob',
      });
      if (!response.ok || !data) throw ApiError.from(response, error);
      saveFile(
        data,
        filenameFrom(response.headers.get('content-disposition')) ?? `dragnet-search-${historyId}.${format}`,
      );
    },
  });
}

/** The corpus' channel categories (not an organization's: a plain key). */
export function useChannelCategories() {
  const { client } = useApi();
  return useQuery({
    queryKey: ['messenger-categories'],
    queryFn: () =>
      unwrap(client.GET('/service/messenger-channels-categories/', { params: { query: { page: 1, page_size: 500 } } })),
    staleTime: 10 * 60_000,
  });
}

const LISTED_CHANNELS = 50;

/** The first channels of a category, or of all, whose name holds `search`. */
export function useChannels(categoryId: number | undefined, search: string) {
  const { client } = useApi();
  return useQuery({
    queryKey: ['messenger-channels', categoryId, search],
    queryFn: () =>
      unwrap(
        client.GET('/service/messenger-channels/', {
          params: {
            query: {
              page: 1,
              page_size: LISTED_CHANNELS,
              ...(search ? { search } : {}),
              ...(categoryId ? { category_id: categoryId } : {}),
            },
          },
        }),
      ),
    staleTime: 60_000,
    placeholderData: (previous) => previous,
  });
}
