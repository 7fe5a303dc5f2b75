import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useApi, useScopedKey } from '../../api/api-context.tsx';
import { unwrap, type ApiClient } from '../../api/client.ts';
import type { Ok } from '../../api/types.ts';

/**
 * The organization's delivery settings (spec 2.5–2.8), read by the settings pages and the rule
 * form. Each organization has at most 10 recipients, senders and webhooks (spec 8.2), so one page
 * of 100 holds them all.
 */
export type Recipient = Ok<'/service/alert_system_setting_get_recipient_list/', 'get'>['results'][number];
export type Sender = Ok<'/service/alert_system_setting_get_sender_list/', 'get'>['results'][number];
export type Template = Ok<'/service/alert_system_setting_get_template_list/', 'get'>['results'][number];
export type Webhook = Ok<'/service/alert_system_setting_get_webhook_list/', 'get'>['results'][number];
export type Organization = Ok<'/service/organization/', 'get'>;

const ALL = { page: 1, page_size: 100 };

export type DeliveryList = 'recipients' | 'senders' | 'templates' | 'webhooks';

function useDeliveryList<Item>(name: DeliveryList, read: (client: ApiClient) => Promise<{ results: Item[] }>) {
  const { client } = useApi();
  return useQuery({ queryKey: useScopedKey('delivery', name), queryFn: () => read(client), select: (page) => page.results });
}

export const useRecipients = () =>
  useDeliveryList('recipients', (client) => unwrap(client.GET('/service/alert_system_setting_get_recipient_list/', { params: { query: ALL } })));
export const useSenders = () =>
  useDeliveryList('senders', (client) => unwrap(client.GET('/service/alert_system_setting_get_sender_list/', { params: { query: ALL } })));
export const useTemplates = () =>
  useDeliveryList('templates', (client) => unwrap(client.GET('/service/alert_system_setting_get_template_list/', { params: { query: ALL } })));
export const useWebhooks = () =>
  useDeliveryList('webhooks', (client) => unwrap(client.GET('/service/alert_system_setting_get_webhook_list/', { params: { query: ALL } })));

/** After a change: the list again, and the rules, whose attachments may name what changed. */
export function useRefreshDelivery() {
  const queryClient = useQueryClient();
  const scope = useScopedKey();
  return (name: DeliveryList) =>
    Promise.all([queryClient.invalidateQueries({ queryKey: [...scope, 'delivery', name] }), queryClient.invalidateQueries({ queryKey: [...scope, 'rules'] })]);
}

/** The organization the dashboard acts for: its default frequency, rule limit, dashboard URL. */
export function useOrganization() {
  const { client } = useApi();
  return useQuery({
    queryKey: useScopedKey('organization'),
    queryFn: () => unwrap(client.GET('/service/organization/', { params: { query: {} } })),
    staleTime: 5 * 60_000,
  });
}

/** A change to one delivery list (create, update, delete) that refreshes it when done. */
export function useDeliveryChange<Input, Output>(name: DeliveryList, change: (client: ApiClient, input: Input) => Promise<Output>) {
  const { client } = useApi();
  const refresh = useRefreshDelivery();
  return useMutation({ mutationFn: (input: Input) => change(client, input), onSuccess: () => refresh(name) });
}

/** Spec 8.2: at most this many recipients, senders and webhooks per organization. */
export const PER_ORGANIZATION = 10;
