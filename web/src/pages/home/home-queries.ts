import { useQuery } from '@tanstack/react-query';
import { useApi, useScopedKey } from '../../api/api-context.tsx';
import { unwrap } from '../../api/client.ts';
import type { Ok } from '../../api/types.ts';

export type MatchStats = Ok<'/service/alert_system_match_stats/', 'get'>;
export type CollectorStatus = Ok<'/service/collectors/', 'get'>[number];

/** The period the home page's figures cover. */
export const HOME_DAYS = 30;
/** How many of the newest new incidents the home page lists. */
export const NEWEST_INCIDENTS = 5;

// Keyed under 'matches', as the inbox is: an incident change refreshes the home page too.
export function useNewestIncidents() {
  const { client } = useApi();
  return useQuery({
    queryKey: useScopedKey('matches', 'incidents', 'home'),
    queryFn: () =>
      unwrap(
        client.GET('/service/alert_system_incident_list/', {
          params: { query: { status: ['new'], page: 1, page_size: NEWEST_INCIDENTS } },
        }),
      ),
  });
}

export function useMatchStats() {
  const { client } = useApi();
  return useQuery({
    queryKey: useScopedKey('matches', 'stats', HOME_DAYS),
    queryFn: () => unwrap(client.GET('/service/alert_system_match_stats/', { params: { query: { days: HOME_DAYS } } })),
  });
}

/** The collectors' schedule and health (GET /service/collectors/): system accounts only. */
export function useCollectors(enabled: boolean) {
  const { client } = useApi();
  return useQuery({
    queryKey: ['collectors'],
    queryFn: () => unwrap(client.GET('/service/collectors/')),
    enabled,
  });
}

/** Each catalog source's newest stored record (GET /service/source_freshness/). */
export function useSourceFreshness() {
  const { client } = useApi();
  return useQuery({
    queryKey: ['source-freshness'],
    queryFn: () => unwrap(client.GET('/service/source_freshness/', { params: { query: {} } })),
    staleTime: 5 * 60_000,
  });
}
