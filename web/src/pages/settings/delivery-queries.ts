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

export type DeliveryList = 'recipients' | 'senders' | 'templates' | 'webhooks' | 'siem_targets';

function useDeliveryList<Item>(name: DeliveryList, read: (client: ApiClient) => Promise<{ results: Item[] }>) {
  const { client } = useApi();
  return useQuery({
    queryKey: useScopedKey('delivery', name),
    queryFn: () => read(client),
    select: (page) => page.results,
  });
}

export const useRecipients = () =>
  useDeliveryList('recipients', (client) =>
    unwrap(client.GET('/service/alert_system_setting_get_recipient_list/', { params: { query: ALL } })),
  );
export const useSenders = () =>
  useDeliveryList('senders', (client) =>
    unwrap(client.GET('/service/alert_system_setting_get_sender_list/', { params: { query: ALL } })),
  );
export const useTemplates = () =>
  useDeliveryList('templates', (client) =>
    unwrap(client.GET('/service/alert_system_setting_get_template_list/', { params: { query: ALL } })),
  );
export const useWebhooks = () =>
  useDeliveryList('webhooks', (client) =>
    unwrap(client.GET('/service/alert_system_setting_get_webhook_list/', { params: { query: ALL } })),
  );

/** After a change: the list again, and the rules, whose attachments may name what changed. */
function useRefreshDelivery() {
  const queryClient = useQueryClient();
  const scope = useScopedKey();
  return (name: DeliveryList) =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: [...scope, 'delivery', name] }),
      queryClient.invalidateQueries({ queryKey: [...scope, 'rules'] }),
    ]);
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
function useDeliveryChange<Input, Output>(
  name: DeliveryList,
  change: (client: ApiClient, input: Input) => Promise<Output>,
) {
  const { client } = useApi();
  const refresh = useRefreshDelivery();
  return useMutation({ mutationFn: (input: Input) => change(client, input), onSuccess: () => refresh(name) });
}

/** Spec 8.2: at most this many recipients, senders and webhooks per organization. */
export const PER_ORGANIZATION = 10;

export const useCreateRecipient = () =>
  useDeliveryChange('recipients', (client, body: { email: string; is_default: boolean }) =>
    unwrap(client.POST('/service/alert_system_setting_create_recipient/', { body })),
  );
export const useDeleteRecipient = () =>
  useDeliveryChange('recipients', (client, id: number) =>
    unwrap(client.DELETE('/service/alert_system_setting_delete_recipient/{id}/', { params: { path: { id } } })),
  );

interface SenderInput {
  email: string;
  server_host: string;
  port: number;
  encryption_method: 'TLS' | 'SSL';
  authentication_required: boolean;
  is_default: boolean;
  username?: string;
  password?: string;
}

export const useCreateSender = () =>
  useDeliveryChange('senders', (client, body: SenderInput) =>
    unwrap(client.POST('/service/alert_system_setting_create_sender/', { body })),
  );
export const useDeleteSender = () =>
  useDeliveryChange('senders', (client, id: number) =>
    unwrap(client.DELETE('/service/alert_system_setting_delete_sender/{id}/', { params: { path: { id } } })),
  );

/** spec 4.4: queues a test email (202); its outcome shows in the delivery attempts. */
export function useTestEmail() {
  const { client } = useApi();
  return useMutation({
    mutationFn: (body: { sender_id: number; recipient: string }) =>
      unwrap(client.POST('/service/alert_system_setting_test_email/', { body })),
  });
}

export interface TemplateInput {
  name: string;
  subject: string;
  body: string;
  is_default: boolean;
}

const updateTemplate = (client: ApiClient, id: number, body: TemplateInput) =>
  unwrap(client.PUT('/service/alert_system_setting_update_template/{id}/', { params: { path: { id } }, body }));

/** Creates a template, or replaces `template` when given. */
export const useSaveTemplate = (template?: Template) =>
  useDeliveryChange('templates', (client, body: TemplateInput) =>
    template
      ? updateTemplate(client, template.id, body)
      : unwrap(client.POST('/service/alert_system_setting_create_template/', { body })),
  );
export const useMakeDefaultTemplate = () =>
  useDeliveryChange('templates', (client, template: Template) =>
    updateTemplate(client, template.id, {
      name: template.name,
      subject: template.subject,
      body: template.body,
      is_default: true,
    }),
  );
export const useDeleteTemplate = () =>
  useDeliveryChange('templates', (client, id: number) =>
    unwrap(client.DELETE('/service/alert_system_setting_delete_template/{id}/', { params: { path: { id } } })),
  );

interface WebhookInput {
  name: string;
  url: string;
  headers: Record<string, string>;
  is_default: boolean;
}

const updateWebhook = (client: ApiClient, id: number, body: WebhookInput) =>
  unwrap(client.PUT('/service/alert_system_setting_update_webhook/{id}/', { params: { path: { id } }, body }));

/** Creates a webhook, or replaces `webhook` when given. */
export const useSaveWebhook = (webhook?: Webhook) =>
  useDeliveryChange('webhooks', (client, body: WebhookInput) =>
    webhook
      ? updateWebhook(client, webhook.id, body)
      : unwrap(client.POST('/service/alert_system_setting_create_webhook/', { body })),
  );
export const useMakeDefaultWebhook = () =>
  useDeliveryChange('webhooks', (client, webhook: Webhook) =>
    updateWebhook(client, webhook.id, {
      name: webhook.name,
      url: webhook.url,
      headers: webhook.headers,
      is_default: true,
    }),
  );
export const useDeleteWebhook = () =>
  useDeliveryChange('webhooks', (client, id: number) =>
    unwrap(client.DELETE('/service/alert_system_setting_delete_webhook/{id}/', { params: { path: { id } } })),
  );

/** Sends a sample notification to a webhook now; the answer is the recorded attempt. */
export function useTestWebhook(webhook: Webhook) {
  const { client } = useApi();
  const refresh = useRefreshDelivery();
  return useMutation({
    mutationFn: () =>
      unwrap(client.POST('/service/alert_system_setting_test_webhook/{id}/', { params: { path: { id: webhook.id } } })),
    onSuccess: () => refresh('webhooks'),
  });
}

export type SiemTarget = Ok<'/service/alert_system_setting_get_siem_target_list/', 'get'>['results'][number];
export type SiemTargetInput = {
  name: string;
  kind: 'splunk_hec' | 'syslog';
  url?: string | null;
  token?: string | null;
  index?: string | null;
  sourcetype?: string | null;
  source?: string | null;
  host?: string | null;
  port?: number | null;
  format?: 'json' | 'cef' | null;
  app_name?: string | null;
  facility?: number | null;
  verify_tls?: boolean;
  ca_pem?: string | null;
};

/** The organization's Splunk HEC and syslog targets (docs/siem.md). */
export const useSiemTargets = () =>
  useDeliveryList('siem_targets', (client) =>
    unwrap(client.GET('/service/alert_system_setting_get_siem_target_list/', { params: { query: ALL } })),
  );
/** Creates a SIEM target, or replaces `target` when given (a token left empty keeps the stored one). */
export const useSaveSiemTarget = (target?: SiemTarget) =>
  useDeliveryChange('siem_targets', (client, body: SiemTargetInput) =>
    target
      ? unwrap(
          client.PUT('/service/alert_system_setting_update_siem_target/{id}/', {
            params: { path: { id: target.id } },
            body,
          }),
        )
      : unwrap(client.POST('/service/alert_system_setting_create_siem_target/', { body })),
  );
export const useDeleteSiemTarget = () =>
  useDeliveryChange('siem_targets', (client, id: number) =>
    unwrap(client.DELETE('/service/alert_system_setting_delete_siem_target/{id}/', { params: { path: { id } } })),
  );
/** Sends one sample event to a target now; the answer is the recorded attempt. */
export function useTestSiemTarget(target: SiemTarget) {
  const { client } = useApi();
  return useMutation({
    mutationFn: () =>
      unwrap(
        client.POST('/service/alert_system_setting_test_siem_target/{id}/', { params: { path: { id: target.id } } }),
      ),
  });
}

const ATTEMPTS_SHOWN = 10;

/** The latest delivery attempts (emails and webhooks, tests included). */
/** The latest delivery attempts, of one rule's notifications when `ruleId` is given. */
export function useDeliveryAttempts(ruleId?: number) {
  const { client } = useApi();
  return useQuery({
    queryKey: useScopedKey('delivery', 'attempts', ruleId),
    queryFn: () =>
      unwrap(
        client.GET('/service/alert_system_setting_get_delivery_attempt_list/', {
          params: {
            query: { page: 1, page_size: ATTEMPTS_SHOWN, ...(ruleId === undefined ? {} : { rule_id: ruleId }) },
          },
        }),
      ),
  });
}
