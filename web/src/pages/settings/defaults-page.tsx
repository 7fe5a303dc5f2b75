import { Link } from '@tanstack/react-router';
import { useId } from 'react';
import { ErrorNotice, Loading } from '../../ui/notices.tsx';
import { Page } from '../../ui/page.tsx';
import { frequencyLabel } from '../rules/frequency.ts';
import { useActiveRuleCount } from '../rules/rule-queries.ts';
import {
  useMakeDefaultTemplate,
  useMakeDefaultWebhook,
  useOrganization,
  useRecipients,
  useSenders,
  useTemplates,
  useWebhooks,
} from './delivery-queries.ts';

/**
 * Settings → Defaults: what new rules start from. Each organization has one default of each
 * delivery resource (spec 3.5); templates and webhooks can be switched here, recipients and
 * senders (which cannot be updated, spec 4.4) when a new one is added as the default.
 */
const defaultOf = <T extends { is_default: boolean }>(items: T[] | undefined) => items?.find((item) => item.is_default);

export function DefaultsPage() {
  const organization = useOrganization();
  const activeRules = useActiveRuleCount();
  const recipients = useRecipients();
  const senders = useSenders();
  const templates = useTemplates();
  const webhooks = useWebhooks();
  const setTemplate = useMakeDefaultTemplate();
  const setWebhook = useMakeDefaultWebhook();
  return (
    <Page title="Defaults">
      {organization.isPending && <Loading />}
      <ErrorNotice
        error={organization.error ?? recipients.error ?? senders.error ?? templates.error ?? webhooks.error}
      />
      {organization.data && (
        <section className="card" aria-labelledby="organization">
          <h2 id="organization">{organization.data.name}</h2>
          <dl className="summary">
            <dt>Frequency of new rules</dt>
            <dd>{frequencyLabel(organization.data.default_frequency)}</dd>
            <dt>Active rules</dt>
            <dd>
              {activeRules.data ? activeRules.data.count.toLocaleString() : '…'} of at most{' '}
              {organization.data.alert_rule_limit.toLocaleString()}
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
            {defaultOf(recipients.data)?.email ?? 'none'} ·{' '}
            <Link to="/settings/recipients">add one as the new default</Link>
          </dd>
          <dt>Sender</dt>
          <dd>
            {defaultOf(senders.data)?.email ?? 'the system sender, if set up'} ·{' '}
            <Link to="/settings/senders">add one as the new default</Link>
          </dd>
        </dl>
        <div className="form-grid">
          <DefaultPicker
            label="Email template"
            items={templates.data}
            busy={setTemplate.isPending}
            onPick={(template) => setTemplate.mutate(template)}
          />
          <DefaultPicker
            label="Webhook"
            items={webhooks.data}
            busy={setWebhook.isPending}
            onPick={(webhook) => setWebhook.mutate(webhook)}
          />
        </div>
      </section>
    </Page>
  );
}

/** Picks the default among a resource that can be updated in place (templates, webhooks). */
function DefaultPicker<T extends { id: number; name: string; is_default: boolean }>(props: {
  label: string;
  items: T[] | undefined;
  busy: boolean;
  onPick: (item: T) => void;
}) {
  const id = useId();
  const current = defaultOf(props.items);
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      <select
        id={id}
        value={current?.id ?? ''}
        disabled={props.busy || !props.items?.length}
        onChange={(event) => {
          const chosen = props.items?.find((item) => item.id === Number(event.target.value));
          if (chosen) props.onPick(chosen);
        }}
      >
        {!current && <option value="">None</option>}
        {props.items?.map((item) => (
          <option key={item.id} value={item.id}>
            {item.name}
          </option>
        ))}
      </select>
    </div>
  );
}
