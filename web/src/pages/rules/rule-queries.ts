import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useApi, useScopedKey } from '../../api/api-context.tsx';
import { unwrap } from '../../api/client.ts';
import type { Ok } from '../../api/types.ts';

/** A monitoring rule (spec 2.10) as the API shows it. */
export type Rule = Ok<'/service/alert_system_alert_get_alert_rule/{id}/', 'get'>;
/** One run's match (docs/api.md "Matches and exclusions"). */
export type Match = Ok<'/service/alert_system_match_get_match/{id}/', 'get'>;
export type Exclusion = Ok<'/service/alert_system_exclusion_list/{id}/', 'get'>[number];

export function useRule(ruleId: number | undefined) {
  const { client } = useApi();
  return useQuery({
    queryKey: useScopedKey('rules', 'one', ruleId),
    queryFn: () => unwrap(client.GET('/service/alert_system_alert_get_alert_rule/{id}/', { params: { path: { id: ruleId! } } })),
    enabled: ruleId !== undefined,
  });
}

export function useExclusions(ruleId: number | undefined) {
  const { client } = useApi();
  return useQuery({
    queryKey: useScopedKey('rules', 'exclusions', ruleId),
    queryFn: () => unwrap(client.GET('/service/alert_system_exclusion_list/{id}/', { params: { path: { id: ruleId! } } })),
    enabled: ruleId !== undefined,
  });
}

/** The most matches the chart of a rule's runs shows (one page of the match list). */
export const CHART_MATCHES = 100;

/** A rule's latest matches, newest first, for its run history and chart. */
export function useRuleMatches(ruleId: number | undefined, page = 1, pageSize = CHART_MATCHES) {
  const { client } = useApi();
  return useQuery({
    queryKey: useScopedKey('rules', 'matches', ruleId, page, pageSize),
    queryFn: () =>
      unwrap(client.GET('/service/alert_system_match_get_match_list/{id}/', { params: { path: { id: ruleId! }, query: { page, page_size: pageSize } } })),
    enabled: ruleId !== undefined,
    placeholderData: (previous) => previous,
  });
}

/**
 * After a rule, its matches or exclusions changed: everything cached about rules and matches
 * (counts move together: an exclusion changes the match, the rule and the list).
 */
export function useRefreshRules() {
  const queryClient = useQueryClient();
  const scope = useScopedKey();
  return () => Promise.all([queryClient.invalidateQueries({ queryKey: [...scope, 'rules'] }), queryClient.invalidateQueries({ queryKey: [...scope, 'matches'] })]);
}
