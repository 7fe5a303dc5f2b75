import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useApi, useScopedKey } from '../../api/api-context.tsx';
import { unwrap } from '../../api/client.ts';
import type { Ok } from '../../api/types.ts';
import type { Frequency } from './frequency.ts';
import type { RulesSearch } from './rules-search.ts';

/** A monitoring rule (spec 2.10) as the API shows it. */
export type Rule = Ok<'/service/alert_system_alert_get_alert_rule/{id}/', 'get'>;
/** One run's match (docs/api.md "Matches and exclusions"). */
export type Match = Ok<'/service/alert_system_match_get_match/{id}/', 'get'>;
export type Exclusion = Ok<'/service/alert_system_exclusion_list/{id}/', 'get'>[number];

export function useRule(ruleId: number | undefined) {
  const { client } = useApi();
  return useQuery({
    queryKey: useScopedKey('rules', 'one', ruleId),
    queryFn: () =>
      unwrap(client.GET('/service/alert_system_alert_get_alert_rule/{id}/', { params: { path: { id: ruleId! } } })),
    enabled: ruleId !== undefined,
  });
}

export function useExclusions(ruleId: number | undefined) {
  const { client } = useApi();
  return useQuery({
    queryKey: useScopedKey('rules', 'exclusions', ruleId),
    queryFn: () =>
      unwrap(client.GET('/service/alert_system_exclusion_list/{id}/', { params: { path: { id: ruleId! } } })),
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
      unwrap(
        client.GET('/service/alert_system_match_get_match_list/{id}/', {
          params: { path: { id: ruleId! }, query: { page, page_size: pageSize } },
        }),
      ),
    enabled: ruleId !== undefined,
    placeholderData: (previous) => previous,
  });
}

/**
 * After a rule, its matches or exclusions changed: everything cached about rules and matches
 * (counts move together: an exclusion changes the match, the rule and the list).
 */
function useRefreshRules() {
  const queryClient = useQueryClient();
  const scope = useScopedKey();
  return () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: [...scope, 'rules'] }),
      queryClient.invalidateQueries({ queryKey: [...scope, 'matches'] }),
    ]);
}

export const RULES_PAGE_SIZE = 20;

/** One page of the organization's rules (spec 4.5 list), narrowed by the list page's filters. */
export function useRuleList(search: RulesSearch) {
  const { client } = useApi();
  return useQuery({
    queryKey: useScopedKey('rules', 'list', search),
    queryFn: () =>
      unwrap(
        client.GET('/service/alert_system_alert_get_alert_rule_list/', {
          params: {
            query: {
              page: search.page ?? 1,
              page_size: RULES_PAGE_SIZE,
              include_deleted: search.deleted ?? false,
              ...(search.recipient ? { recipient_id: search.recipient } : {}),
              ...(search.sender ? { sender_id: search.sender } : {}),
              ...(search.template ? { email_template_id: search.template } : {}),
              ...(search.webhook ? { webhook_id: search.webhook } : {}),
            },
          },
        }),
      ),
    placeholderData: keepPreviousData,
  });
}

/** How many rules are active (the list's count; one row is enough to read it). */
export function useActiveRuleCount() {
  const { client } = useApi();
  return useQuery({
    queryKey: useScopedKey('rules', 'count'),
    queryFn: () =>
      unwrap(
        client.GET('/service/alert_system_alert_get_alert_rule_list/', {
          params: { query: { page: 1, page_size: 1, include_deleted: false } },
        }),
      ),
  });
}

/** TLP 2.0 levels a rule marks its findings with in STIX and MISP exports (docs/stix.md). */
export const TLP_LEVELS = ['clear', 'green', 'amber', 'amber+strict', 'red'] as const;
export type Tlp = (typeof TLP_LEVELS)[number];

type RuleBody = {
  name: string;
  email_template: number;
  recipients: number[];
  sender: number | null;
  webhook: number | null;
  siem_targets?: number[];
  frequency?: Frequency;
  tlp?: Tlp;
} & ({ service: number; args: Record<string, unknown> } | { follow_up_token: string });

/** Creates a rule, or replaces `rule` when given; `onSaved` runs once the cached rules are read again. */
export function useSaveRule(rule: Rule | undefined, onSaved: (saved: Rule) => void) {
  const { client } = useApi();
  const refreshRules = useRefreshRules();
  return useMutation({
    mutationFn: (body: RuleBody) =>
      rule
        ? unwrap(
            client.PUT('/service/alert_system_alert_update_alert_rule/{id}/', {
              params: { path: { id: rule.id } },
              body,
            }),
          )
        : unwrap(client.POST('/service/alert_system_alert_create_alert_rule/', { body })),
    onSuccess: async (saved) => {
      await refreshRules();
      onSaved(saved);
    },
  });
}

/** Deletes a rule (spec 3.2: a soft delete) or restores it from its snapshot. */
export function useDeleteOrRestoreRule(rule: Rule) {
  const { client } = useApi();
  const refresh = useRefreshRules();
  return useMutation({
    mutationFn: (action: 'delete' | 'restore') =>
      action === 'delete'
        ? unwrap(
            client.DELETE('/service/alert_system_alert_delete_alert_rule/{id}/', { params: { path: { id: rule.id } } }),
          )
        : unwrap(
            client.POST('/service/alert_system_alert_restore_alert_rule/{id}/', { params: { path: { id: rule.id } } }),
          ),
    onSuccess: refresh,
  });
}

/** Excludes a field's value (or one hit) from every match of the rule; `onExcluded` runs once the counts are read again. */
export function useCreateExclusion(ruleId: number, onExcluded?: (created: Exclusion) => void) {
  const { client } = useApi();
  const refresh = useRefreshRules();
  return useMutation({
    mutationFn: (exclusion: { field: string; value: string }) =>
      unwrap(
        client.POST('/service/alert_system_exclusion_create/{id}/', {
          params: { path: { id: ruleId } },
          body: exclusion,
        }),
      ),
    onSuccess: async (created) => {
      await refresh();
      onExcluded?.(created);
    },
  });
}

/** Removes an exclusion, so its hits count again in every match of the rule; `onRemoved` runs once the counts are read again. */
export function useDeleteExclusion(onRemoved?: (removed: Exclusion) => void) {
  const { client } = useApi();
  const refresh = useRefreshRules();
  return useMutation({
    mutationFn: (exclusion: Exclusion) =>
      unwrap(client.DELETE('/service/alert_system_exclusion_delete/{id}/', { params: { path: { id: exclusion.id } } })),
    onSuccess: async (_nothing, removed) => {
      await refresh();
      onRemoved?.(removed);
    },
  });
}
