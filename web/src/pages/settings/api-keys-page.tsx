import { useState, type FormEvent } from 'react';
import { ApiError } from '../../api/errors.ts';
import { ConfirmButton } from '../../ui/confirm-button.tsx';
import { Field } from '../../ui/field.tsx';
import { formatDateTime } from '../../ui/format.ts';
import { ErrorNotice, Loading } from '../../ui/notices.tsx';
import { Page } from '../../ui/page.tsx';
import { Pager } from '../../ui/pager.tsx';
import { ShownOnce } from '../../ui/shown-once.tsx';
import { Table } from '../../ui/table.tsx';
import {
  API_KEYS_PAGE_SIZE,
  useApiKeys,
  useCreateApiKey,
  useRevokeApiKey,
  type ApiKeyInput,
  type CreatedApiKey,
} from './api-key-queries.ts';

const DAY_MS = 24 * 3600 * 1000;
const EXPIRIES = [
  { value: 'never', label: 'Never', days: null },
  { value: '30', label: 'In 30 days', days: 30 },
  { value: '90', label: 'In 90 days', days: 90 },
  { value: '365', label: 'In a year', days: 365 },
] as const;

const SCOPES = { read: 'Read only', read_write: 'Read and write' } as Record<string, string>;

/** Settings → API keys (docs/api.md "API keys"): keys for machine clients, each shown once. */
export function ApiKeysPage() {
  const [page, setPage] = useState(1);
  const keys = useApiKeys(page);
  const revoke = useRevokeApiKey();
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const pages = Math.max(1, Math.ceil((keys.data?.count ?? 0) / API_KEYS_PAGE_SIZE));
  return (
    <Page title="API keys">
      <p className="muted">
        A key lets a program (a SIEM, a TAXII or MISP client) call the API as you, in this organization:{' '}
        <code>Authorization: Bearer &lt;key&gt;</code>, or as the password of HTTP Basic on the TAXII and MISP feed
        endpoints. A read-only key can search and read but change nothing. Keys cannot manage keys.
      </p>
      {created && <KeyOnce apiKey={created} onClose={() => setCreated(null)} />}
      <NewKeyForm onCreated={setCreated} />
      <section aria-labelledby="api-key-list">
        <h2 id="api-key-list">Keys of this organization</h2>
        {keys.isPending && <Loading />}
        <ErrorNotice error={keys.error} />
        <ErrorNotice error={revoke.error} title="Not revoked" />
        {keys.data?.count === 0 && <p>No API keys yet.</p>}
        {keys.data && keys.data.results.length > 0 && (
          <Table headings={['Name', 'Key', 'Scope', 'Created', 'Expires', 'Last used', 'Status']} actions="Actions">
            {keys.data.results.map((key) => (
              <tr key={key.id}>
                <td>{key.name}</td>
                <td>
                  <code>{key.prefix}…</code>
                </td>
                <td>{SCOPES[key.scope] ?? key.scope}</td>
                <td>
                  {formatDateTime(key.created_at)}
                  {key.created_by && <span className="muted"> by {key.created_by}</span>}
                </td>
                <td>{key.expires_at ? formatDateTime(key.expires_at) : 'Never'}</td>
                <td>{key.last_used_at ? formatDateTime(key.last_used_at) : 'Never used'}</td>
                <td>
                  {key.status === 'revoked' && key.revoked_at
                    ? `Revoked ${formatDateTime(key.revoked_at)}`
                    : key.status === 'expired'
                      ? 'Expired'
                      : 'Active'}
                </td>
                <td>
                  {key.status !== 'revoked' && (
                    <ConfirmButton
                      label={`Revoke ${key.name}`}
                      confirm={`Revoke ${key.name}`}
                      onConfirm={() => revoke.mutate(key.id)}
                      disabled={revoke.isPending}
                    >
                      Revoke
                    </ConfirmButton>
                  )}
                </td>
              </tr>
            ))}
          </Table>
        )}
        <Pager
          page={page}
          pages={pages}
          label="API key pages"
          to={(target, text) => (
            <button type="button" onClick={() => setPage(target)}>
              {text}
            </button>
          )}
        />
      </section>
    </Page>
  );
}

function NewKeyForm({ onCreated }: { onCreated: (key: CreatedApiKey) => void }) {
  const [name, setName] = useState('');
  const [scope, setScope] = useState<ApiKeyInput['scope']>('read');
  const [expiry, setExpiry] = useState<(typeof EXPIRIES)[number]['value']>('never');
  const create = useCreateApiKey();
  const error = create.error instanceof ApiError ? create.error : undefined;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const days = EXPIRIES.find((option) => option.value === expiry)?.days ?? null;
    create.mutate(
      {
        name: name.trim(),
        scope,
        expires_at: days === null ? null : new Date(Date.now() + days * DAY_MS).toISOString(),
      },
      {
        onSuccess: (key) => {
          setName('');
          onCreated(key);
        },
      },
    );
  };
  return (
    <form className="card" onSubmit={submit} noValidate aria-labelledby="new-api-key">
      <h2 id="new-api-key">New API key</h2>
      <ErrorNotice error={create.error} title="Not created" fieldsShown={['name', 'scope', 'expires_at']} />
      <Field label="Name" hint="What uses it, e.g. “Splunk poller”." error={error?.fieldMessage('name')}>
        {(props) => (
          <input
            {...props}
            type="text"
            maxLength={255}
            autoComplete="off"
            value={name}
            onChange={(event) => setName(event.target.value)}
          />
        )}
      </Field>
      <Field label="Scope" error={error?.fieldMessage('scope')}>
        {(props) => (
          <select {...props} value={scope} onChange={(event) => setScope(event.target.value as ApiKeyInput['scope'])}>
            <option value="read">Read only</option>
            <option value="read_write">Read and write</option>
          </select>
        )}
      </Field>
      <Field label="Expires" error={error?.fieldMessage('expires_at')}>
        {(props) => (
          <select {...props} value={expiry} onChange={(event) => setExpiry(event.target.value as typeof expiry)}>
            {EXPIRIES.map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <div className="actions">
        <button type="submit" className="primary" disabled={create.isPending}>
          Create key
        </button>
      </div>
    </form>
  );
}

/** The key in clear, this once: the server keeps only its digest. */
function KeyOnce({ apiKey, onClose }: { apiKey: CreatedApiKey; onClose: () => void }) {
  return (
    <ShownOnce secret={apiKey.key} testId="api-key" copyLabel="Copy the key" onClose={onClose}>
      <strong>{apiKey.name}</strong> is ready. Copy the key now: it is shown only this once and cannot be shown again.
      Keep it as you would a password; if it leaks, revoke it.
    </ShownOnce>
  );
}
