import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useApi, useScopedKey } from '../../api/api-context.tsx';
import { unwrap } from '../../api/client.ts';
import type { Ok } from '../../api/types.ts';

export type DomainReport = Ok<'/service/domain_quick_search/', 'get'>;
export type EmailReport = Ok<'/service/email_quick_search/', 'get'>;
export type Sighting = DomainReport['newest'][number];
export type QuickSearchSlug = 'domain_quick_search' | 'email_quick_search' | 'accounts_database_search';

export interface AccountsQuery {
  login?: string;
  domain?: string;
  url?: string;
  password_sha1_prefix?: string;
  page: number;
}

export const ACCOUNTS_PAGE_SIZE = 20;

/** The quick searches' remaining daily quota and the background load (docs/api.md "Quick searches"). */
export function useSearchCapacity() {
  const { client } = useApi();
  return useQuery({
    queryKey: useScopedKey('live-search-capacity'),
    queryFn: () => unwrap(client.GET('/service/live_search_capacity/', { params: { query: {} } })),
  });
}

/** After a search, counted or refunded, the quota shown is read again. */
function useRefreshCapacity() {
  const queryClient = useQueryClient();
  const key = useScopedKey('live-search-capacity');
  return () => queryClient.invalidateQueries({ queryKey: key });
}

// Mutations, not queries: each search costs quota, so it runs only when the analyst submits.
export function useDomainQuickSearch() {
  const { client } = useApi();
  const onSettled = useRefreshCapacity();
  return useMutation({
    mutationFn: (domain: string) =>
      unwrap(client.GET('/service/domain_quick_search/', { params: { query: { domain } } })),
    onSettled,
  });
}

export function useEmailQuickSearch() {
  const { client } = useApi();
  const onSettled = useRefreshCapacity();
  return useMutation({
    mutationFn: (email: string) => unwrap(client.GET('/service/email_quick_search/', { params: { query: { email } } })),
    onSettled,
  });
}

export function useAccountsSearch() {
  const { client } = useApi();
  const onSettled = useRefreshCapacity();
  return useMutation({
    mutationFn: (query: AccountsQuery) =>
      unwrap(
        client.GET('/service/accounts_database_search/', {
          params: { query: { ...query, page_size: ACCOUNTS_PAGE_SIZE } },
        }),
      ),
    onSettled,
  });
}

/**
 * The first 5 hex digits of the password's SHA-1, computed here so the password never leaves
 * the browser (the k-anonymity range the accounts search takes).
 */
export async function sha1Prefix(password: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-1', new TextEncoder().encode(password));
  return [...new Uint8Array(digest).slice(0, 3)]
    .map((byte) => byte.toString(16).padStart(2, '0'))
    .join('')
    .slice(0, 5)
    .toUpperCase();
}
