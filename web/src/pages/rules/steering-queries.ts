import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useApi, useScopedKey } from '../../api/api-context.tsx';
import { unwrap } from '../../api/client.ts';
import type { Ok } from '../../api/types.ts';

/** One page of a rule's preview (docs/api.md "Pause, run now, preview"). */
export type PreviewResult = Ok<'/service/alert_system_rule_preview/', 'post'>;

export function usePauseState(ruleId: number) {
  const { client } = useApi();
  return useQuery({
    queryKey: useScopedKey('rules', 'pause', ruleId),
    queryFn: () =>
      unwrap(client.GET('/service/alert_system_rule_pause_state/{id}/', { params: { path: { id: ruleId } } })),
  });
}

/** The ids of the organization's paused rules, for the rules list. */
export function usePausedRuleIds() {
  const { client } = useApi();
  return useQuery({
    queryKey: useScopedKey('rules', 'paused'),
    queryFn: async () =>
      new Set((await unwrap(client.GET('/service/alert_system_rule_paused_list/'))).map((state) => state.rule_id)),
  });
}

/** After a pause or a run: the rule, its pause state, its matches and its deliveries are read again. */
function useRefreshRule() {
  const queryClient = useQueryClient();
  const scope = useScopedKey();
  return () =>
    Promise.all(
      ['rules', 'matches', 'delivery'].map((key) => queryClient.invalidateQueries({ queryKey: [...scope, key] })),
    );
}

export function useSetPaused(ruleId: number) {
  const { client } = useApi();
  const refresh = useRefreshRule();
  return useMutation({
    mutationFn: (paused: boolean) =>
      unwrap(
        paused
          ? client.POST('/service/alert_system_rule_pause/{id}/', { params: { path: { id: ruleId } } })
          : client.POST('/service/alert_system_rule_resume/{id}/', { params: { path: { id: ruleId } } }),
      ),
    onSuccess: refresh,
  });
}

export function useRunNow(ruleId: number) {
  const { client } = useApi();
  const refresh = useRefreshRule();
  return useMutation({
    mutationFn: () =>
      unwrap(client.POST('/service/alert_system_rule_run_now/{id}/', { params: { path: { id: ruleId } } })),
    onSuccess: refresh,
  });
}

export const PREVIEW_PAGE_SIZE = 20;

/** One page of what the rule would have found in a past window; nothing is stored or sent. */
export function useRulePreview(ruleId: number, window: { from: string; to: string } | null, page: number) {
  const { client } = useApi();
  return useQuery({
    queryKey: useScopedKey('rule-preview', ruleId, window, page),
    queryFn: () =>
      unwrap(
        client.POST('/service/alert_system_rule_preview/', {
          body: { rule_id: ruleId, from: window!.from, to: window!.to, page, page_size: PREVIEW_PAGE_SIZE },
        }),
      ),
    enabled: window !== null,
    placeholderData: keepPreviousData,
    // A preview is an answer to a question asked at one moment: no refetch on focus.
    staleTime: Infinity,
  });
}
