import { useState, type FormEvent } from 'react';
import { ApiError } from '../../api/errors.ts';
import { Field } from '../../ui/field.tsx';
import { ErrorNotice, Loading } from '../../ui/notices.tsx';
import { Page } from '../../ui/page.tsx';
import { ShownOnce } from '../../ui/shown-once.tsx';
import { Table } from '../../ui/table.tsx';
import {
  PER_ORGANIZATION,
  useDeleteWebhook,
  useSaveWebhook,
  useTestWebhook,
  useWebhooks,
  type Webhook,
} from './delivery-queries.ts';
import { ResourceActions } from './resource-actions.tsx';

type Editing = { kind: 'new' } | { kind: 'edit'; webhook: Webhook } | null;

/** Settings → Webhooks (spec 2.8): signed POSTs to your endpoints; the secret is shown once. */
export function WebhooksPage() {
  const webhooks = useWebhooks();
  const [editing, setEditing] = useState<Editing>(null);
  const [created, setCreated] = useState<Webhook | null>(null);
  const remove = useDeleteWebhook();
  return (
    <Page
      title="Webhooks"
      actions={
        editing === null && (
          <button type="button" className="primary" onClick={() => setEditing({ kind: 'new' })}>
            New webhook
          </button>
        )
      }
    >
      <p className="muted">
        Each notification is a signed JSON POST (X-AlertSystem-Signature and Standard Webhooks headers); Slack, Teams
        and Discord URLs get their own message format. At most {PER_ORGANIZATION}.
      </p>
      {created && <SecretOnce webhook={created} onClose={() => setCreated(null)} />}
      {editing && (
        <WebhookEditor
          key={editing.kind === 'edit' ? editing.webhook.id : 'new'}
          webhook={editing.kind === 'edit' ? editing.webhook : undefined}
          onDone={(saved) => {
            setEditing(null);
            if (saved && editing.kind === 'new') setCreated(saved);
          }}
        />
      )}
      {webhooks.isPending && <Loading />}
      <ErrorNotice error={webhooks.error} />
      <ErrorNotice error={remove.error} title="Not deleted" />
      {webhooks.data?.length === 0 && !editing && <p>No webhooks yet.</p>}
      {webhooks.data && webhooks.data.length > 0 && (
        <Table headings={['Name', 'URL', 'Headers']} actions="Actions">
          {webhooks.data.map((webhook) => (
            <tr key={webhook.id}>
              <td>
                {webhook.name} {webhook.is_default && <span className="badge">default</span>}
              </td>
              <td className="wrap">{webhook.url}</td>
              <td>{Object.keys(webhook.headers).join(', ') || '—'}</td>
              <td>
                <ResourceActions
                  name={webhook.name}
                  rules={{ webhook: webhook.id }}
                  onDelete={() => remove.mutate(webhook.id)}
                >
                  <button
                    type="button"
                    onClick={() => setEditing({ kind: 'edit', webhook })}
                    aria-label={`Edit ${webhook.name}`}
                  >
                    Edit
                  </button>
                  <TestWebhook webhook={webhook} />
                </ResourceActions>
              </td>
            </tr>
          ))}
        </Table>
      )}
    </Page>
  );
}

/** spec 2.8: the secret is server-made and rotated by recreating the webhook; shown here once. */
function SecretOnce({ webhook, onClose }: { webhook: Webhook; onClose: () => void }) {
  return (
    <ShownOnce secret={webhook.secret} testId="webhook-secret" copyLabel="Copy the secret" onClose={onClose}>
      <strong>{webhook.name}</strong> is ready. Its signing secret is shown only now: store it with your receiver to
      verify signatures.
    </ShownOnce>
  );
}

/** Header rows as the form edits them; blank rows are dropped when saving. */
type HeaderRow = { name: string; value: string };

function WebhookEditor({ webhook, onDone }: { webhook?: Webhook; onDone: (saved?: Webhook) => void }) {
  const [name, setName] = useState(webhook?.name ?? '');
  const [url, setUrl] = useState(webhook?.url ?? '');
  const [isDefault, setDefault] = useState(webhook?.is_default ?? false);
  const [rows, setRows] = useState<HeaderRow[]>(() => [
    ...Object.entries(webhook?.headers ?? {}).map(([header, value]) => ({ name: header, value })),
    { name: '', value: '' },
  ]);
  const save = useSaveWebhook(webhook);
  const error = save.error instanceof ApiError ? save.error : undefined;
  const setRow = (index: number, row: HeaderRow) =>
    setRows((current) => current.map((entry, at) => (at === index ? row : entry)));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const headers = Object.fromEntries(
      rows.filter((row) => row.name.trim()).map((row) => [row.name.trim(), row.value]),
    );
    save.mutate(
      { name: name.trim(), url: url.trim(), headers, is_default: isDefault },
      { onSuccess: (saved) => onDone(saved) },
    );
  };
  return (
    <form className="card" onSubmit={submit} noValidate aria-labelledby="webhook-editor">
      <h2 id="webhook-editor">{webhook ? `Edit “${webhook.name}”` : 'New webhook'}</h2>
      <ErrorNotice error={save.error} title="Not saved" fieldsShown={['name', 'url']} />
      <Field label="Name" error={error?.fieldMessage('name')}>
        {(props) => (
          <input
            {...props}
            type="text"
            maxLength={200}
            value={name}
            onChange={(event) => setName(event.target.value)}
          />
        )}
      </Field>
      <Field
        label="URL"
        hint="http(s), at most 2048 characters; it must reach a public address."
        error={error?.fieldMessage('url')}
      >
        {(props) => (
          <input {...props} type="url" maxLength={2048} value={url} onChange={(event) => setUrl(event.target.value)} />
        )}
      </Field>
      <fieldset>
        <legend>Headers sent with every delivery</legend>
        {rows.map((row, index) => (
          <div className="form-grid header-row" key={index}>
            <Field label={`Header ${index + 1} name`}>
              {(props) => (
                <input
                  {...props}
                  type="text"
                  autoComplete="off"
                  value={row.name}
                  onChange={(event) => setRow(index, { ...row, name: event.target.value })}
                />
              )}
            </Field>
            <Field label={`Header ${index + 1} value`}>
              {(props) => (
                <input
                  {...props}
                  type="text"
                  autoComplete="off"
                  value={row.value}
                  onChange={(event) => setRow(index, { ...row, value: event.target.value })}
                />
              )}
            </Field>
          </div>
        ))}
        <button type="button" onClick={() => setRows([...rows, { name: '', value: '' }])}>
          Add a header
        </button>
      </fieldset>
      <div className="actions">
        <label className="check">
          <input type="checkbox" checked={isDefault} onChange={(event) => setDefault(event.target.checked)} />
          The default webhook
        </label>
        <button type="submit" className="primary" disabled={save.isPending}>
          {webhook ? 'Save webhook' : 'Create webhook'}
        </button>
        <button type="button" onClick={() => onDone()}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** Sends a sample notification now and says how the endpoint answered (the recorded attempt). */
function TestWebhook({ webhook }: { webhook: Webhook }) {
  const test = useTestWebhook(webhook);
  return (
    <>
      <button type="button" onClick={() => test.mutate()} disabled={test.isPending} aria-label={`Test ${webhook.name}`}>
        {test.isPending ? 'Sending…' : 'Test'}
      </button>
      {test.data && (
        <span role="status" className={test.data.status === 'success' ? 'ok' : 'error'}>
          {test.data.status === 'success'
            ? `Delivered (${test.data.status_code})`
            : `Failed: ${test.data.error ?? test.data.status_code}`}
        </span>
      )}
      <ErrorNotice error={test.error} title="Not sent" />
    </>
  );
}
