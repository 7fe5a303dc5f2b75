import { Link, useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { ApiError } from '../../api/errors.ts';
import { Field } from '../../ui/field.tsx';
import { ErrorNotice, Loading } from '../../ui/notices.tsx';
import {
  useOrganization,
  useRecipients,
  useSenders,
  useTemplates,
  useWebhooks,
  type Organization,
  type Recipient,
  type Sender,
  type Template,
  type Webhook,
} from '../settings/delivery-queries.ts';
import { argFieldNames, argsFromValues, serverArgErrors, valuesFromArgs, type ArgValues } from './args-form.ts';
import { ArgsFields } from './args-fields.tsx';
import { useCatalog, type CatalogService } from './catalog.ts';
import { allowedFrequency, FREQUENCIES, frequencyLabel, type Frequency } from './frequency.ts';
import { TLP_LEVELS, useSaveRule, type Rule, type Tlp } from './rule-queries.ts';
import { SiemTargetsField } from './siem-targets-field.tsx';

/** What the form starts from: a rule being edited, or a new rule's address (new-rule-search.ts). */
export interface RuleDraft {
  name?: string;
  service?: number;
  args?: Record<string, unknown>;
  /** A search's token: the rule is made from that search while its args stay as they came. */
  followUpToken?: string;
}

const SHOWN_BESIDE_INPUTS = [
  'name',
  'service',
  'frequency',
  'tlp',
  'recipients',
  'sender',
  'email_template',
  'webhook',
];

/**
 * Creates or edits a monitoring rule: the service and its args (a form generated from the
 * catalog's args_schema), the frequency, and where notifications go. Loads what it offers first.
 */
export function RuleForm({ rule, draft }: { rule?: Rule; draft: RuleDraft }) {
  const catalog = useCatalog();
  const recipients = useRecipients();
  const senders = useSenders();
  const templates = useTemplates();
  const webhooks = useWebhooks();
  const organization = useOrganization();
  const queries = [catalog, recipients, senders, templates, webhooks, organization];
  const failed = queries.find((query) => query.error);
  if (failed) return <ErrorNotice error={failed.error} title="The form cannot be shown" />;
  if (!catalog.data || !recipients.data || !senders.data || !templates.data || !webhooks.data || !organization.data)
    return <Loading />;
  return (
    <RuleFormFields
      rule={rule}
      draft={draft}
      options={{
        catalog: catalog.data,
        recipients: recipients.data,
        senders: senders.data,
        templates: templates.data,
        webhooks: webhooks.data,
        organization: organization.data,
      }}
    />
  );
}

interface Options {
  catalog: CatalogService[];
  recipients: Recipient[];
  senders: Sender[];
  templates: Template[];
  webhooks: Webhook[];
  organization: Organization;
}

const defaultOf = <T extends { id: number; is_default: boolean }>(items: T[]) =>
  items.find((item) => item.is_default)?.id ?? null;

function RuleFormFields({ rule, draft, options }: { rule?: Rule; draft: RuleDraft; options: Options }) {
  const navigate = useNavigate();
  const editing = rule !== undefined;

  const [name, setName] = useState(rule?.name ?? draft.name ?? '');
  const [serviceId, setServiceId] = useState<number | undefined>(rule?.service ?? draft.service);
  const service = options.catalog.find((entry) => entry.id === serviceId);
  const [argValues, setArgValues] = useState<ArgValues>(() =>
    valuesFromArgs(service?.args_schema.params ?? [], rule?.args ?? draft.args),
  );
  // A search's token stands for its args until the user changes one of them.
  const [followUpToken, setFollowUpToken] = useState(rule ? undefined : draft.followUpToken);
  const [frequency, setFrequency] = useState<string>(rule?.frequency ?? '');
  const [tlp, setTlp] = useState<Tlp>((rule?.tlp as Tlp | undefined) ?? 'amber');
  const [recipientIds, setRecipientIds] = useState<number[]>(
    () => rule?.recipients ?? [defaultOf(options.recipients)].filter((id) => id !== null),
  );
  const [senderId, setSenderId] = useState<number | null>(rule ? rule.sender : defaultOf(options.senders));
  const [templateId, setTemplateId] = useState<number | null>(
    rule ? rule.email_template : defaultOf(options.templates),
  );
  const [webhookId, setWebhookId] = useState<number | null>(rule ? rule.webhook : defaultOf(options.webhooks));
  const [siemTargetIds, setSiemTargetIds] = useState<number[]>(rule?.siem_targets ?? []);
  const [localErrors, setLocalErrors] = useState<Record<string, string>>({});

  const save = useSaveRule(rule, (saved) => void navigate({ to: '/rules/$ruleId', params: { ruleId: saved.id } }));

  const chooseService = (id: number | undefined) => {
    const next = options.catalog.find((entry) => entry.id === id);
    setServiceId(id);
    setArgValues(valuesFromArgs(next?.args_schema.params ?? []));
    setFollowUpToken(undefined);
    if (next && frequency && !allowedFrequency(frequency, next.frequency)) setFrequency('');
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const params = service?.args_schema.params ?? [];
    const { args, errors } = argsFromValues(params, argValues);
    const local: Record<string, string> = { ...errors };
    if (!name.trim()) local.name = 'is required';
    if (!service) local.service = 'choose a service';
    if (templateId === null) local.email_template = 'choose a template';
    if (recipientIds.length === 0 && webhookId === null)
      local.recipients = 'choose at least one recipient or a webhook';
    setLocalErrors(local);
    if (Object.keys(local).length || !service || templateId === null) return;
    const common = {
      name: name.trim(),
      email_template: templateId,
      recipients: recipientIds,
      sender: senderId,
      webhook: webhookId,
      siem_targets: siemTargetIds,
      ...(frequency ? { frequency: frequency as Frequency } : {}),
      tlp,
    };
    save.mutate(
      followUpToken ? { ...common, follow_up_token: followUpToken } : { ...common, service: service.id, args },
    );
  };

  const apiError = save.error instanceof ApiError ? save.error : undefined;
  const params = service?.args_schema.params ?? [];
  const argErrors = { ...serverArgErrors(apiError, params), ...localErrors };
  const fieldError = (field: string) => localErrors[field] ?? apiError?.fieldMessage(field);
  const floor = service?.frequency ?? 'daily';
  const orgDefault = allowedFrequency(options.organization.default_frequency, floor)
    ? options.organization.default_frequency
    : floor;

  return (
    <form onSubmit={submit} noValidate aria-label={editing ? 'Edit the rule' : 'New rule'}>
      <ErrorNotice
        error={save.error}
        title="The rule was not saved"
        fieldsShown={[...SHOWN_BESIDE_INPUTS, 'siem_targets', ...argFieldNames(apiError, params)]}
      />
      <Field
        label="Name"
        hint="Unique among the organization's rules; it names the rule in notifications."
        error={fieldError('name')}
      >
        {(props) => (
          <input
            {...props}
            type="text"
            maxLength={255}
            required
            value={name}
            onChange={(event) => setName(event.target.value)}
          />
        )}
      </Field>
      <Field
        label="Service"
        hint={
          editing
            ? 'A rule keeps its service; make a new rule to watch another source.'
            : 'The source this rule watches.'
        }
        error={fieldError('service')}
      >
        {(props) => (
          <select
            {...props}
            value={serviceId ?? ''}
            disabled={editing}
            onChange={(event) => chooseService(event.target.value ? Number(event.target.value) : undefined)}
          >
            <option value="">Choose a service…</option>
            {options.catalog.map((entry) => (
              <option key={entry.id} value={entry.id}>
                {entry.alias}
                {entry.has_data ? '' : ' (no data yet)'}
              </option>
            ))}
          </select>
        )}
      </Field>
      {service && (
        <>
          {followUpToken && (
            <p className="notice">
              These settings come from your search. Changing one makes the rule from the values shown instead.
            </p>
          )}
          <ArgsFields
            service={service}
            values={argValues}
            errors={argErrors}
            onChange={(param, value) => {
              setArgValues((current) => ({ ...current, [param]: value }));
              setFollowUpToken(undefined);
            }}
          />
        </>
      )}
      <Field
        label="Frequency"
        hint={`How often the rule runs. ${service ? `${service.alias} is checked at most ${frequencyLabel(floor).toLowerCase()}.` : ''}`}
        error={fieldError('frequency')}
      >
        {(props) => (
          <select {...props} value={frequency} onChange={(event) => setFrequency(event.target.value)}>
            {!editing && <option value="">Organization default ({frequencyLabel(orgDefault).toLowerCase()})</option>}
            {FREQUENCIES.map((entry) => (
              <option key={entry.value} value={entry.value} disabled={!allowedFrequency(entry.value, floor)}>
                {entry.label}
                {allowedFrequency(entry.value, floor) ? '' : ' (faster than this source)'}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field
        label="TLP"
        hint="The Traffic Light Protocol 2.0 marking of this rule's findings in STIX and MISP exports."
        error={fieldError('tlp')}
      >
        {(props) => (
          <select {...props} value={tlp} onChange={(event) => setTlp(event.target.value as Tlp)}>
            {TLP_LEVELS.map((level) => (
              <option key={level} value={level}>
                TLP:{level.toUpperCase()}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Delivery
        options={options}
        recipients={recipientIds}
        onRecipients={setRecipientIds}
        sender={senderId}
        onSender={setSenderId}
        template={templateId}
        onTemplate={setTemplateId}
        webhook={webhookId}
        onWebhook={setWebhookId}
        error={fieldError}
      />
      <SiemTargetsField value={siemTargetIds} onChange={setSiemTargetIds} error={fieldError('siem_targets')} />
      <div className="actions">
        <button type="submit" className="primary" disabled={save.isPending}>
          {save.isPending ? 'Saving…' : editing ? 'Save the rule' : 'Create the rule'}
        </button>
        {editing ? (
          <Link to="/rules/$ruleId" params={{ ruleId: rule.id }}>
            Cancel
          </Link>
        ) : (
          <Link to="/rules">Cancel</Link>
        )}
        {!editing && <span className="muted">A new rule runs once at once; then on its schedule.</span>}
      </div>
    </form>
  );
}

const idOrNull = (value: string) => (value ? Number(value) : null);

/** Where notifications go (spec 6): recipients by email through a sender and a template, a webhook, or both. */
function Delivery(props: {
  options: Options;
  recipients: number[];
  onRecipients: (ids: number[]) => void;
  sender: number | null;
  onSender: (id: number | null) => void;
  template: number | null;
  onTemplate: (id: number | null) => void;
  webhook: number | null;
  onWebhook: (id: number | null) => void;
  error: (field: string) => string | undefined;
}) {
  const { options } = props;
  const recipientsError = props.error('recipients');
  return (
    <fieldset>
      <legend>Notifications</legend>
      <fieldset aria-invalid={recipientsError ? true : undefined}>
        <legend>Recipients</legend>
        {options.recipients.length === 0 ? (
          <p className="muted">
            No recipients yet. <Link to="/settings/recipients">Add one in Settings</Link>.
          </p>
        ) : (
          <div className="actions">
            {options.recipients.map((recipient) => (
              <label key={recipient.id} className="check">
                <input
                  type="checkbox"
                  checked={props.recipients.includes(recipient.id)}
                  onChange={(event) =>
                    props.onRecipients(
                      event.target.checked
                        ? [...props.recipients, recipient.id]
                        : props.recipients.filter((id) => id !== recipient.id),
                    )
                  }
                />
                {recipient.email}
              </label>
            ))}
          </div>
        )}
        <p className="hint muted">
          Each run with new hits emails these addresses. A rule needs recipients, a webhook, or both.
        </p>
        {recipientsError && <p className="error">{recipientsError}</p>}
      </fieldset>
      <Field
        label="Sender"
        hint="The SMTP account emails go out from. None: the system sender, when the operator set one up."
        error={props.error('sender')}
      >
        {(field) => (
          <select
            {...field}
            value={props.sender ?? ''}
            onChange={(event) => props.onSender(idOrNull(event.target.value))}
          >
            <option value="">None</option>
            {options.senders.map((sender) => (
              <option key={sender.id} value={sender.id}>
                {sender.email}
                {sender.is_system_created ? ' (system)' : ''}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Email template" error={props.error('email_template')}>
        {(field) => (
          <select
            {...field}
            value={props.template ?? ''}
            required
            onChange={(event) => props.onTemplate(idOrNull(event.target.value))}
          >
            <option value="">Choose a template…</option>
            {options.templates.map((template) => (
              <option key={template.id} value={template.id}>
                {template.name}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Webhook" hint="Also POST a signed notification to this URL." error={props.error('webhook')}>
        {(field) => (
          <select
            {...field}
            value={props.webhook ?? ''}
            onChange={(event) => props.onWebhook(idOrNull(event.target.value))}
          >
            <option value="">None</option>
            {options.webhooks.map((webhook) => (
              <option key={webhook.id} value={webhook.id}>
                {webhook.name}
              </option>
            ))}
          </select>
        )}
      </Field>
    </fieldset>
  );
}
