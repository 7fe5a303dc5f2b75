import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { useApi, useScopedKey } from '../../api/api-context.tsx';
import { unwrap } from '../../api/client.ts';
import { filenameFrom, saveFile } from '../../api/download.ts';
import { ApiError } from '../../api/errors.ts';
import type { Match } from '../rules/rule-queries.ts';
import type { IncidentSearch } from './incident-search.ts';

/** How often a pending match (an async source still scanning) is read again. */
const PENDING_POLL_MS = 3000;

export const HITS_PAGE_SIZE = 20;

/** One match of a rule, read again while its source is still scanning. */
export function useMatch(matchId: number) {
  const { client } = useApi();
  return useQuery({
    queryKey: useScopedKey('matches', matchId),
    queryFn: () =>
      unwrap(client.GET('/service/alert_system_match_get_match/{id}/', { params: { path: { id: matchId } } })),
    refetchInterval: (query) => (query.state.data?.status === 'pending' ? PENDING_POLL_MS : false),
  });
}

/** A page of a match's hits, filtered and sorted as the incident page's address says. */
export function useMatchHits(match: Match, search: IncidentSearch) {
  const { client } = useApi();
  return useQuery({
    queryKey: useScopedKey('matches', match.id, 'hits', search),
    queryFn: () =>
      unwrap(
        client.GET('/service/alert_system_match_get_match_hits/{id}/', {
          params: {
            path: { id: match.id },
            query: {
              page: search.page ?? 1,
              page_size: HITS_PAGE_SIZE,
              include_excluded: !search.hide_excluded,
              ...(search.sort ? { sort: search.sort } : {}),
              ...(search.filter ? { filter: search.filter } : {}),
            },
          },
        }),
      ),
    placeholderData: keepPreviousData,
  });
}

/** Posts read around a hit in its channel or thread ("open in context"). */
const CONTEXT_POSTS = 10;

/** The posts around a hit in its conversation, read when the analyst asks for them. */
export function useHitContext(hitId: number) {
  const { client } = useApi();
  return useQuery({
    queryKey: useScopedKey('hit-context', hitId),
    queryFn: () =>
      unwrap(
        client.GET('/service/alert_system_match_hit_context/{id}/', {
          params: { path: { id: hitId }, query: { before: CONTEXT_POSTS, after: CONTEXT_POSTS } },
        }),
      ),
  });
}

/** A hit's leaked password in clear; the server records the reveal in the audit log. */
export function useRevealHit(hitId: number) {
  const { client } = useApi();
  return useMutation({
    mutationFn: () =>
      unwrap(client.POST('/service/alert_system_match_hit_reveal/{id}/', { params: { path: { id: hitId } } })),
  });
}

/** The incident export formats (docs/api.md "Incident exports"): STIX is a STIX 2.1 bundle. */
export const INCIDENT_EXPORT_FORMATS = ['csv', 'json', 'stix'] as const;
type IncidentExportFormat = (typeof INCIDENT_EXPORT_FORMATS)[number];

/** Downloads an incident's hits in one of the export formats, under the server's file name. */
export function useIncidentExport(matchId: number) {
  const { client } = useApi();
  return useMutation({
    mutationFn: async (format: IncidentExportFormat) => {
      const path = '/service/alert_system_incident_export/{id}/';
      const result = await client.GET(path, { params: { path: { id: matchId }, query: { format } }, parseAs: 'blob' });
      if (!result.response.ok || !result.data) throw ApiError.from(result.response, result.error);
      const fallback = `dragnet-incident-${matchId}.${format === 'stix' ? 'stix.json' : format}`;
      saveFile(result.data, filenameFrom(result.response.headers.get('content-disposition')) ?? fallback);
    },
  });
}
