import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useId } from 'react';
import { useApi, useScopedKey } from '../../api/api-context.tsx';
import { unwrap } from '../../api/client.ts';
import { ErrorNotice, Loading } from '../../ui/notices.tsx';
import { Page } from '../../ui/page.tsx';
import { frequencyLabel } from '../rules/frequency.ts';
import { useDeliveryChange, useOrganization, useRecipients, useSenders, useTemplates, useWebhooks, type Template, type Webhook } from './delivery-queries.ts';

/**
 * Settings → Defaults: what new rules start from. Each organization has one default of each
 * delivery resource (spec 3.5); templates and webhooks can be switched here, recipients and
 * senders (which cannot be updated, spec 4.4) when a new one is added as the default.
 */
export function DefaultsPage() {
  const organization = useOrganization();
  const { client } = useApi();
  const activeRules = useQuery({
    queryKey: useScopedKey('rules', 'count'),
    queryFn: () => unwrap(client.GET('/service/alert_system_alert_get_alert_rule_list/', { params: { query: { page: 1, page_size: 1, include_deleted: false } } })),
  });
  const recipients = useRecipients();
  const senders = useSenders();
  const templates = useTemplates();
  const webhooks = useWebhooks();
  const ids = { template: useId(), webhook: useId() };
  const setTemplate = useDeliveryChange('templates', (api, template: Template) =>
    unwrap(
      api.PUT('/service/alert_system_setting_update_template/{id}/', {
        params: { path: { id: template.id } },
        body: { name: template.name, subject: template.subject, body: template.body, is_default: true },
      }),
    ),
  );
  const setWebhook = useDeliveryChange('webhooks', (api, webhook: Webhook) =>
    unwrap(
      api.PUT('/service/alert_system_setting_update_webhook/{id}/', {
        params: { path: { id: webhook.id } },
        body: { name: webhook.name, url: webhook.url, headers: webhook.headers, is_default: true },
      }),
    ),
  );
  const defaultOf = <T extends { is_default: boolean }>(items: T[] | undefined) => items?.find((item) => item.is_default);

  return (
    <Page title="Defaults">
      {organization.isPending && <Loading />}
      <ErrorNotice error={organization.error ?? recipients.error ?? senders.error ?? templates.error ?? webhooks.error} />
      {organization.data && (
        <section className="card" aria-labelledby="organization">
          <h2 id="organization">{organization.data.name}</h2>
          <dl className="summary">
            <dt>Frequency of new rules</dt>
            <dd>{frequencyLabel(organization.data.default_frequency)}</dd>
            <dt>Active rules</dt>
            <dd>
              {activeRules.data ? activeRules.data.count.toLocaleString() : '…'} of at most {organization.data.alert_rule_limit.toLocaleString()}
            </dd>
            <dt>Links in notifications</dt>
            <dd>
              <code>{organization.data.dashboard_url}/incidents/…</code>
            </dd>
          </dl>
          <p className="muted">An operator changes these with the dragnet command (dragnet org set).</p>
        </section>
      )}
      <section className="card" aria-labelledby="delivery-defaults">
        <h2 id="delivery-defaults">Delivery defaults of new rules</h2>
        <ErrorNotice error={setTemplate.error ?? setWebhook.error} title="Not changed" />
        <dl className="summary">
          <dt>Recipient</dt>
          <dd>
            {defaultOf(recipients.data)?.email ?? 'none'} · <Link to="/settings/recipients">add one as the new default</Link>
          </dd>
          <dt>Sender</dt>
          <dd>
            {defaultOf(senders.data)?.email ?? 'the system sender, if set up'} · <Link to="/settings/senders">add one as the new default</Link>
          </dd>
        </dl>
        <div className="form-grid">
          <div className="field">
            <label htmlFor={ids.template}>Email template</label>
            <select
              id={ids.template}
              value={defaultOf(templates.data)?.id ?? ''}
              disabled={setTemplate.isPending || !templates.data?.length}
              onChange={(event) => {
                const chosen = templates.data?.find((template) => template.id === Number(event.target.value));
                if (chosen) setTemplate.mutate(chosen);
              }}
            >
              {!defaultOf(templates.data) && <option value="">None</option>}
              {templates.data?.map((template) => (
                <option key={template.id} value={template.id}>
                  {template.name}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor={ids.webhook}>Webhook</label>
            <select
              id={ids.webhook}
              value={defaultOf(webhooks.data)?.id ?? ''}
              disabled={setWebhook.isPending || !webhooks.data?.length}
              onChange={(event) => {
                const chosen = webhooks.data?.find((webhook) => webhook.id === Number(event.target.value));
                if (chosen) setWebhook.mutate(chosen);
              }}
            >
              {!defaultOf(webhooks.data) && <option value="">None</option>}
              {webhooks.data?.map((webhook) => (
                <option key={webhook.id} value={webhook.id}>
                  {webhook.name}
                </option>
              ))}
            </select>
          </div>
        </div>
      </section>
    </Page>
  );
}
