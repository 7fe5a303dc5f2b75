import { useState, type FormEvent } from 'react';
import { ApiError } from '../../api/errors.ts';
import { ConfirmButton } from '../../ui/confirm-button.tsx';
import { Field } from '../../ui/field.tsx';
import { ErrorNotice, Loading } from '../../ui/notices.tsx';
import { Page } from '../../ui/page.tsx';
import { Table } from '../../ui/table.tsx';
import {
  PER_ORGANIZATION,
  useDeleteSiemTarget,
  useSaveSiemTarget,
  useSiemTargets,
  useTestSiemTarget,
  type SiemTarget,
  type SiemTargetInput,
} from './delivery-queries.ts';

type Editing = { kind: 'new' } | { kind: 'edit'; target: SiemTarget } | null;

const KIND_LABELS = { splunk_hec: 'Splunk HEC', syslog: 'Syslog (TLS)' } as const;

/** Where a target sends: the collector URL, or syslog's host and port. */
const destination = (target: SiemTarget) =>
  target.kind === 'splunk_hec' ? target.url : `${target.host}:${target.port}`;

/**
 * Settings → SIEM forwarding (docs/siem.md): Splunk HTTP Event Collector and syslog over TLS
 * targets that rules send their hits to, besides email and webhooks. The HEC token is write-only.
 */
export function SiemPage() {
  const targets = useSiemTargets();
  const [editing, setEditing] = useState<Editing>(null);
  const remove = useDeleteSiemTarget();
  return (
    <Page
      title="SIEM forwarding"
      actions={
        editing === null && (
          <button type="button" className="primary" onClick={() => setEditing({ kind: 'new' })}>
            New SIEM target
          </button>
        )
      }
    >
      <p className="muted">
        A rule with SIEM targets sends each new hit as an event to Splunk&apos;s HTTP Event Collector or to a syslog
        receiver over TLS (RFC 5424, JSON or CEF), in addition to its email and webhook. At most {PER_ORGANIZATION}.
      </p>
      {editing && (
        <SiemTargetEditor
          key={editing.kind === 'edit' ? editing.target.id : 'new'}
          target={editing.kind === 'edit' ? editing.target : undefined}
          onDone={() => setEditing(null)}
        />
      )}
      {targets.isPending && <Loading />}
      <ErrorNotice error={targets.error} />
      <ErrorNotice error={remove.error} title="Not deleted" />
      {targets.data?.length === 0 && !editing && <p>No SIEM targets yet.</p>}
      {targets.data && targets.data.length > 0 && (
        <Table headings={['Name', 'Kind', 'Destination', 'Format']} actions="Actions">
          {targets.data.map((target) => (
            <tr key={target.id}>
              <td>{target.name}</td>
              <td>{KIND_LABELS[target.kind]}</td>
              <td className="wrap">{destination(target)}</td>
              <td>{target.kind === 'syslog' ? target.format?.toUpperCase() : 'JSON'}</td>
              <td>
                <div className="actions">
                  <button
                    type="button"
                    onClick={() => setEditing({ kind: 'edit', target })}
                    aria-label={`Edit ${target.name}`}
                  >
                    Edit
                  </button>
                  <TestSiemTarget target={target} />
                  <ConfirmButton
                    label={`Delete ${target.name}`}
                    confirm={`Delete ${target.name}`}
                    onConfirm={() => remove.mutate(target.id)}
                  >
                    Delete
                  </ConfirmButton>
                </div>
              </td>
            </tr>
          ))}
        </Table>
      )}
    </Page>
  );
}

/** The form's text inputs, as typed; empty ones are sent as null (the server's defaults). */
interface Draft {
  name: string;
  kind: 'splunk_hec' | 'syslog';
  url: string;
  token: string;
  index: string;
  sourcetype: string;
  source: string;
  host: string;
  port: string;
  format: 'json' | 'cef';
  app_name: string;
  facility: string;
  verify_tls: boolean;
  ca_pem: string;
}

const draftOf = (target?: SiemTarget): Draft => ({
  name: target?.name ?? '',
  kind: target?.kind ?? 'splunk_hec',
  url: target?.url ?? '',
  token: '',
  index: target?.index ?? '',
  sourcetype: target?.sourcetype ?? '',
  source: target?.source ?? '',
  host: target?.host ?? '',
  port: target?.port === null || target?.port === undefined ? '' : String(target.port),
  format: target?.format ?? 'json',
  app_name: target?.app_name ?? '',
  facility: target?.facility === null || target?.facility === undefined ? '' : String(target.facility),
  verify_tls: target?.verify_tls ?? true,
  ca_pem: target?.ca_pem ?? '',
});

const orNull = (text: string) => (text.trim() ? text.trim() : null);
const numberOrNull = (text: string) => (text.trim() ? Number(text) : null);

function bodyOf(draft: Draft): SiemTargetInput {
  const common = {
    name: draft.name.trim(),
    kind: draft.kind,
    verify_tls: draft.verify_tls,
    ca_pem: orNull(draft.ca_pem),
  };
  if (draft.kind === 'splunk_hec') {
    return {
      ...common,
      url: draft.url.trim(),
      // An empty token on an edit keeps the stored one (write-only).
      ...(draft.token ? { token: draft.token } : {}),
      index: orNull(draft.index),
      sourcetype: orNull(draft.sourcetype),
      source: orNull(draft.source),
    };
  }
  return {
    ...common,
    host: draft.host.trim(),
    port: numberOrNull(draft.port),
    format: draft.format,
    app_name: orNull(draft.app_name),
    facility: numberOrNull(draft.facility),
  };
}

function SiemTargetEditor({ target, onDone }: { target?: SiemTarget; onDone: () => void }) {
  const [draft, setDraft] = useState<Draft>(() => draftOf(target));
  const save = useSaveSiemTarget(target);
  const error = save.error instanceof ApiError ? save.error : undefined;
  const set = (change: Partial<Draft>) => setDraft((current) => ({ ...current, ...change }));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate(bodyOf(draft), { onSuccess: () => onDone() });
  };
  const text = (field: keyof Draft & string, label: string, hint?: string, type = 'text') => (
    <Field label={label} hint={hint} error={error?.fieldMessage(field)}>
      {(props) => (
        <input
          {...props}
          type={type}
          autoComplete="off"
          value={draft[field] as string}
          onChange={(event) => set({ [field]: event.target.value })}
        />
      )}
    </Field>
  );
  return (
    <form className="card" onSubmit={submit} noValidate aria-labelledby="siem-editor">
      <h2 id="siem-editor">{target ? `Edit “${target.name}”` : 'New SIEM target'}</h2>
      <ErrorNotice error={save.error} title="Not saved" fieldsShown={Object.keys(draft)} />
      {text('name', 'Name')}
      <Field label="Kind" error={error?.fieldMessage('kind')}>
        {(props) => (
          <select
            {...props}
            value={draft.kind}
            onChange={(event) => set({ kind: event.target.value as Draft['kind'] })}
          >
            <option value="splunk_hec">Splunk HTTP Event Collector</option>
            <option value="syslog">Syslog over TLS (RFC 5424)</option>
          </select>
        )}
      </Field>
      {draft.kind === 'splunk_hec' ? (
        <>
          {text('url', 'Collector URL', 'e.g. https://splunk.example.com:8088/services/collector/event', 'url')}
          {text(
            'token',
            'HEC token',
            target?.has_token
              ? 'A token is stored and never shown; leave empty to keep it, or type a new one.'
              : 'Write-only: stored encrypted and never shown again.',
            'password',
          )}
          {text('index', 'Index', 'Optional: the token’s default index otherwise.')}
          {text('sourcetype', 'Source type', 'Optional: _json by default.')}
          {text('source', 'Source', 'Optional: dragnet by default.')}
        </>
      ) : (
        <>
          {text('host', 'Host', 'The receiver’s name or address; it must be reachable and public.')}
          {text('port', 'Port', '6514 (syslog over TLS) by default.', 'number')}
          <Field label="Message format" error={error?.fieldMessage('format')}>
            {(props) => (
              <select
                {...props}
                value={draft.format}
                onChange={(event) => set({ format: event.target.value as Draft['format'] })}
              >
                <option value="json">JSON</option>
                <option value="cef">CEF (ArcSight)</option>
              </select>
            )}
          </Field>
          {text('app_name', 'App name', 'Optional: dragnet by default.')}
          {text('facility', 'Facility', 'Optional: 0–23, 13 (log audit) by default.', 'number')}
        </>
      )}
      <Field
        label="CA certificate (PEM)"
        hint="Optional: a private CA to trust for this target."
        error={error?.fieldMessage('ca_pem')}
      >
        {(props) => (
          <textarea
            {...props}
            rows={4}
            value={draft.ca_pem}
            onChange={(event) => set({ ca_pem: event.target.value })}
          />
        )}
      </Field>
      <div className="actions">
        <label className="check">
          <input
            type="checkbox"
            checked={draft.verify_tls}
            onChange={(event) => set({ verify_tls: event.target.checked })}
          />
          Verify the TLS certificate
        </label>
        <button type="submit" className="primary" disabled={save.isPending}>
          {target ? 'Save the target' : 'Create the target'}
        </button>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** Sends one sample event now and says how the target took it (the recorded attempt). */
function TestSiemTarget({ target }: { target: SiemTarget }) {
  const test = useTestSiemTarget(target);
  return (
    <>
      <button type="button" onClick={() => test.mutate()} disabled={test.isPending} aria-label={`Test ${target.name}`}>
        {test.isPending ? 'Sending…' : 'Test'}
      </button>
      {test.data && (
        <span role="status" className={test.data.status === 'success' ? 'ok' : 'error'}>
          {test.data.status === 'success' ? 'Delivered' : `Failed: ${test.data.error ?? test.data.status_code}`}
        </span>
      )}
      <ErrorNotice error={test.error} title="Not sent" />
    </>
  );
}
