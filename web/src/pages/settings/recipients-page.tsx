import { useState, type FormEvent } from 'react';
import { ApiError } from '../../api/errors.ts';
import { Field } from '../../ui/field.tsx';
import { formatDateTime } from '../../ui/format.ts';
import { ErrorNotice, Loading } from '../../ui/notices.tsx';
import { Page } from '../../ui/page.tsx';
import { Table } from '../../ui/table.tsx';
import { PER_ORGANIZATION, useCreateRecipient, useDeleteRecipient, useRecipients } from './delivery-queries.ts';
import { ResourceActions } from './resource-actions.tsx';

/** Settings → Recipients (spec 2.5): the addresses rules email. */
export function RecipientsPage() {
  const recipients = useRecipients();
  const remove = useDeleteRecipient();
  return (
    <Page title="Recipients">
      <p className="muted">
        Addresses that monitoring rules email. One is the default, ticked on new rules. At most {PER_ORGANIZATION}.
      </p>
      <NewRecipient />
      {recipients.isPending && <Loading />}
      <ErrorNotice error={recipients.error} />
      <ErrorNotice error={remove.error} title="Not deleted" />
      {recipients.data?.length === 0 && <p>No recipients yet.</p>}
      {recipients.data && recipients.data.length > 0 && (
        <Table headings={['Email', 'Added']} actions="Actions">
          {recipients.data.map((recipient) => (
            <tr key={recipient.id}>
              <td>
                {recipient.email} {recipient.is_default && <span className="badge">default</span>}
              </td>
              <td>{formatDateTime(recipient.created_at)}</td>
              <td>
                <ResourceActions
                  name={recipient.email}
                  rules={{ recipient: recipient.id }}
                  onDelete={() => remove.mutate(recipient.id)}
                />
              </td>
            </tr>
          ))}
        </Table>
      )}
    </Page>
  );
}

function NewRecipient() {
  const [email, setEmail] = useState('');
  const [isDefault, setDefault] = useState(false);
  const create = useCreateRecipient();
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate(
      { email: email.trim(), is_default: isDefault },
      {
        onSuccess: () => {
          setEmail('');
          setDefault(false);
        },
      },
    );
  };
  const error = create.error instanceof ApiError ? create.error : undefined;
  return (
    <form className="card" onSubmit={submit} noValidate aria-label="Add a recipient">
      <ErrorNotice error={create.error} title="Not added" fieldsShown={['email']} />
      <Field label="Email address" error={error?.fieldMessage('email')}>
        {(props) => (
          <input
            {...props}
            type="email"
            autoComplete="off"
            required
            value={email}
            onChange={(event) => setEmail(event.target.value)}
          />
        )}
      </Field>
      <div className="actions">
        <label className="check">
          <input type="checkbox" checked={isDefault} onChange={(event) => setDefault(event.target.checked)} />
          Make it the default
        </label>
        <button type="submit" className="primary" disabled={create.isPending || !email.trim()}>
          Add recipient
        </button>
      </div>
    </form>
  );
}
