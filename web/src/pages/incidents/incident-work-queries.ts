import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useApi, useScopedKey } from '../../api/api-context.tsx';
import { unwrap } from '../../api/client.ts';
import type { Ok } from '../../api/types.ts';
import type { InboxSearch, IncidentStatus } from './inbox-search.ts';

/** A match as an incident (docs/api.md "Incidents"). */
export type Incident = Ok<'/service/alert_system_incident_get/{id}/', 'get'>;
export type IncidentEvent = Ok<'/service/alert_system_incident_events/{id}/', 'get'>[number];

export const INBOX_PAGE_SIZE = 25;
/** The navigation's count of new incidents is read again this often, and after every change. */
const COUNTS_REFRESH_MS = 60_000;

const DAY_MS = 86_400_000;

// Incidents are matches: keyed under 'matches', so a change to a match's hits (an exclusion)
// refreshes the inbox too, and an incident change refreshes the match's page.
export function useIncidentList(search: InboxSearch) {
  const { client } = useApi();
  return useQuery({
    queryKey: useScopedKey('matches', 'incidents', 'list', search),
    queryFn: () =>
      unwrap(
        client.GET('/service/alert_system_incident_list/', {
          params: {
            query: {
              page: search.page ?? 1,
              page_size: INBOX_PAGE_SIZE,
              ...(search.status ? { status: search.status } : {}),
              ...(search.rule ? { rule_id: search.rule } : {}),
              ...(search.source ? { source: search.source } : {}),
              ...(search.assignee === 'none' ? { unassigned: true } : {}),
              ...(typeof search.assignee === 'number' ? { assignee_id: search.assignee } : {}),
              ...(search.from ? { created_after: `${search.from}T00:00:00Z` } : {}),
              // `to` is a whole UTC day: up to the start of the next one.
              ...(search.to
                ? { created_before: new Date(Date.parse(`${search.to}T00:00:00Z`) + DAY_MS).toISOString() }
                : {}),
            },
          },
        }),
      ),
    placeholderData: keepPreviousData,
  });
}

export function useIncidentCounts() {
  const { client } = useApi();
  return useQuery({
    queryKey: useScopedKey('matches', 'incidents', 'counts'),
    queryFn: () => unwrap(client.GET('/service/alert_system_incident_counts/')),
    refetchInterval: COUNTS_REFRESH_MS,
  });
}

export function useIncident(matchId: number) {
  const { client } = useApi();
  return useQuery({
    queryKey: useScopedKey('matches', 'incidents', 'one', matchId),
    queryFn: () =>
      unwrap(client.GET('/service/alert_system_incident_get/{id}/', { params: { path: { id: matchId } } })),
  });
}

export function useIncidentEvents(matchId: number) {
  const { client } = useApi();
  return useQuery({
    queryKey: useScopedKey('matches', 'incidents', 'events', matchId),
    queryFn: () =>
      unwrap(client.GET('/service/alert_system_incident_events/{id}/', { params: { path: { id: matchId } } })),
  });
}

/** Who an incident can be assigned to: the organization's active users. */
export function useAssignees() {
  const { client } = useApi();
  return useQuery({
    queryKey: useScopedKey('incident-assignees'),
    queryFn: () => unwrap(client.GET('/service/alert_system_incident_assignees/')),
    staleTime: 5 * 60_000,
  });
}

/** After an incident changed: the inbox, the counts, the match and its rule's figures are read again. */
function useRefreshIncidents() {
  const queryClient = useQueryClient();
  const scope = useScopedKey();
  return () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: [...scope, 'matches'] }),
      queryClient.invalidateQueries({ queryKey: [...scope, 'rules'] }),
    ]);
}

export interface IncidentChange {
  status?: IncidentStatus;
  assignee_id?: number | null;
  note?: string;
  exclude_hits?: boolean;
}

export function useUpdateIncident(matchId: number, onDone?: (change: IncidentChange) => void) {
  const { client } = useApi();
  const refresh = useRefreshIncidents();
  return useMutation({
    mutationFn: (change: IncidentChange) =>
      unwrap(
        client.POST('/service/alert_system_incident_update/{id}/', { params: { path: { id: matchId } }, body: change }),
      ),
    onSuccess: async (_incident, change) => {
      await refresh();
      onDone?.(change);
    },
  });
}

export function useBulkUpdateIncidents(onDone: (result: { updated: number }, status: IncidentStatus) => void) {
  const { client } = useApi();
  const refresh = useRefreshIncidents();
  return useMutation({
    mutationFn: (input: { ids: number[]; status: IncidentStatus }) =>
      unwrap(client.POST('/service/alert_system_incident_bulk_update/', { body: input })),
    onSuccess: async (result, input) => {
      await refresh();
      onDone(result, input.status);
    },
  });
}
