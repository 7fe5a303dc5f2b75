import { useId, useState, type FormEvent } from 'react';
import { ApiError } from '../../api/errors.ts';
import { Field } from '../../ui/field.tsx';
import { ErrorNotice, Loading } from '../../ui/notices.tsx';
import { Page } from '../../ui/page.tsx';
import { Table } from '../../ui/table.tsx';
import { DeliveryLog } from './delivery-log.tsx';
import {
  PER_ORGANIZATION,
  useCreateSender,
  useDeleteSender,
  useSenders,
  useTestEmail,
  type Sender,
} from './delivery-queries.ts';
import { ResourceActions } from './resource-actions.tsx';

/** Settings → Senders (spec 2.6): SMTP accounts that emails go out from, and a test email. */
export function SendersPage() {
  const senders = useSenders();
  const remove = useDeleteSender();
  return (
    <Page title="Senders">
      <p className="muted">
        SMTP accounts that rule emails go out from. A sender cannot be changed: to change its password, add a new one
        and delete the old one. At most {PER_ORGANIZATION}.
      </p>
      {senders.isPending && <Loading />}
      <ErrorNotice error={senders.error} />
      <ErrorNotice error={remove.error} title="Not deleted" />
      {senders.data?.length === 0 && (
        <p>No senders yet: rules email through the system sender when the operator set one up.</p>
      )}
      {senders.data && senders.data.length > 0 && (
        <Table headings={['From', 'Server', 'Security']} actions="Actions">
          {senders.data.map((sender) => (
            <tr key={sender.id}>
              <td>
                {sender.email} {sender.is_default && <span className="badge">default</span>}
                {sender.is_system_created && <span className="badge">system</span>}
              </td>
              <td>{sender.server_host}</td>
              <td>
                {sender.encryption_method === 'TLS' ? 'STARTTLS' : 'plaintext'}
                {sender.authentication_required ? ', with login' : ', no login'}
              </td>
              <td>
                {/* spec 2.6: a system-created sender cannot be deleted. */}
                <ResourceActions
                  name={sender.email}
                  rules={{ sender: sender.id }}
                  onDelete={sender.is_system_created ? undefined : () => remove.mutate(sender.id)}
                />
              </td>
            </tr>
          ))}
        </Table>
      )}
      <NewSender />
      {senders.data && senders.data.length > 0 && <TestEmail senders={senders.data} />}
      <section aria-labelledby="delivery-log">
        <h2 id="delivery-log">Recent deliveries</h2>
        <DeliveryLog />
      </section>
    </Page>
  );
}

const EMPTY = {
  email: '',
  server_host: '',
  port: '587',
  username: '',
  password: '',
  encryption_method: 'TLS' as 'TLS' | 'SSL',
  authentication_required: true,
  is_default: false,
};

function NewSender() {
  const [form, setForm] = useState(EMPTY);
  const set = <K extends keyof typeof EMPTY>(key: K, value: (typeof EMPTY)[K]) =>
    setForm((current) => ({ ...current, [key]: value }));
  const create = useCreateSender();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate(
      {
        email: form.email.trim(),
        server_host: form.server_host.trim(),
        port: Number(form.port),
        encryption_method: form.encryption_method,
        authentication_required: form.authentication_required,
        is_default: form.is_default,
        ...(form.authentication_required ? { username: form.username, password: form.password } : {}),
      },
      { onSuccess: () => setForm(EMPTY) },
    );
  };
  const error = create.error instanceof ApiError ? create.error : undefined;
  const shown = ['email', 'server_host', 'port', 'username', 'password', 'encryption_method'];
  return (
    <form className="card" onSubmit={submit} noValidate aria-labelledby="new-sender">
      <h2 id="new-sender">Add a sender</h2>
      <ErrorNotice error={create.error} title="Not added" fieldsShown={shown} />
      <div className="form-grid">
        <Field label="From address" error={error?.fieldMessage('email')}>
          {(props) => (
            <input
              {...props}
              type="email"
              autoComplete="off"
              value={form.email}
              onChange={(event) => set('email', event.target.value)}
            />
          )}
        </Field>
        <Field label="SMTP server" hint="Host name or address" error={error?.fieldMessage('server_host')}>
          {(props) => (
            <input
              {...props}
              type="text"
              autoComplete="off"
              value={form.server_host}
              onChange={(event) => set('server_host', event.target.value)}
            />
          )}
        </Field>
        <Field label="Port" error={error?.fieldMessage('port')}>
          {(props) => (
            <input
              {...props}
              type="text"
              inputMode="numeric"
              value={form.port}
              onChange={(event) => set('port', event.target.value)}
            />
          )}
        </Field>
        <Field
          label="Encryption"
          hint="TLS upgrades the connection with STARTTLS before logging in, and refuses a server that does not offer it. SSL sends in plaintext."
          error={error?.fieldMessage('encryption_method')}
        >
          {(props) => (
            <select
              {...props}
              value={form.encryption_method}
              onChange={(event) => set('encryption_method', event.target.value as 'TLS' | 'SSL')}
            >
              <option value="TLS">TLS (STARTTLS)</option>
              <option value="SSL">SSL (plaintext)</option>
            </select>
          )}
        </Field>
      </div>
      <label className="check">
        <input
          type="checkbox"
          checked={form.authentication_required}
          onChange={(event) => set('authentication_required', event.target.checked)}
        />
        The server needs a login
      </label>
      {form.authentication_required && (
        <div className="form-grid">
          <Field label="Username" error={error?.fieldMessage('username')}>
            {(props) => (
              <input
                {...props}
                type="text"
                autoComplete="off"
                value={form.username}
                onChange={(event) => set('username', event.target.value)}
              />
            )}
          </Field>
          <Field
            label="Password"
            hint="Stored encrypted and never shown again."
            error={error?.fieldMessage('password')}
          >
            {(props) => (
              <input
                {...props}
                type="password"
                autoComplete="new-password"
                value={form.password}
                onChange={(event) => set('password', event.target.value)}
              />
            )}
          </Field>
        </div>
      )}
      <div className="actions">
        <label className="check">
          <input
            type="checkbox"
            checked={form.is_default}
            onChange={(event) => set('is_default', event.target.checked)}
          />
          Make it the default
        </label>
        <button type="submit" className="primary" disabled={create.isPending}>
          Add sender
        </button>
      </div>
    </form>
  );
}

/** spec 4.4: a test email is queued (202) and sent in the background; its outcome is in the log below. */
function TestEmail({ senders }: { senders: Sender[] }) {
  const ids = { sender: useId() };
  const [senderId, setSenderId] = useState(senders.find((sender) => sender.is_default)?.id ?? senders[0]!.id);
  const [recipient, setRecipient] = useState('');
  const send = useTestEmail();
  const error = send.error instanceof ApiError ? send.error : undefined;
  return (
    <form
      className="card"
      noValidate
      aria-labelledby="test-email"
      onSubmit={(event) => {
        event.preventDefault();
        send.mutate({ sender_id: senderId, recipient: recipient.trim() });
      }}
    >
      <h2 id="test-email">Send a test email</h2>
      <ErrorNotice error={send.error} title="Not sent" fieldsShown={['recipient', 'sender_id']} />
      {send.isSuccess && (
        <p role="status" className="notice success">
          Test email to {send.data.recipient} queued. Its outcome shows under Recent deliveries in a moment.
        </p>
      )}
      <div className="form-grid">
        <div className="field">
          <label htmlFor={ids.sender}>Sender</label>
          <select id={ids.sender} value={senderId} onChange={(event) => setSenderId(Number(event.target.value))}>
            {senders.map((sender) => (
              <option key={sender.id} value={sender.id}>
                {sender.email}
              </option>
            ))}
          </select>
          {error?.fieldMessage('sender_id') && <span className="error">{error.fieldMessage('sender_id')}</span>}
        </div>
        <Field label="Send to" error={error?.fieldMessage('recipient')}>
          {(props) => (
            <input {...props} type="email" value={recipient} onChange={(event) => setRecipient(event.target.value)} />
          )}
        </Field>
      </div>
      <button type="submit" disabled={send.isPending || !recipient.trim()}>
        Send test email
      </button>
    </form>
  );
}
