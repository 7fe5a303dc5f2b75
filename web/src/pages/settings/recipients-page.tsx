import { Link } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { unwrap } from '../../api/client.ts';
import { ApiError } from '../../api/errors.ts';
import { ConfirmButton } from '../../ui/confirm-button.tsx';
import { Field } from '../../ui/field.tsx';
import { formatDateTime } from '../../ui/format.ts';
import { ErrorNotice, Loading } from '../../ui/notices.tsx';
import { Page } from '../../ui/page.tsx';
import { PER_ORGANIZATION, useDeliveryChange, useRecipients } from './delivery-queries.ts';

/** Settings → Recipients (spec 2.5): the addresses rules email. */
export function RecipientsPage() {
  const recipients = useRecipients();
  const remove = useDeliveryChange('recipients', (client, id: number) =>
    unwrap(client.DELETE('/service/alert_system_setting_delete_recipient/{id}/', { params: { path: { id } } })),
  );
  return (
    <Page title="Recipients">
      <p className="muted">Addresses that monitoring rules email. One is the default, ticked on new rules. At most {PER_ORGANIZATION}.</p>
      <NewRecipient />
      {recipients.isPending && <Loading />}
      <ErrorNotice error={recipients.error} />
      <ErrorNotice error={remove.error} title="Not deleted" />
      {recipients.data?.length === 0 && <p>No recipients yet.</p>}
      {recipients.data && recipients.data.length > 0 && (
        <div className="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Added</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {recipients.data.map((recipient) => (
                <tr key={recipient.id}>
                  <td>
                    {recipient.email} {recipient.is_default && <span className="badge">default</span>}
                  </td>
                  <td>{formatDateTime(recipient.created_at)}</td>
                  <td>
                    <div className="actions">
                      <Link to="/rules" search={{ recipient: recipient.id }} aria-label={`Rules using ${recipient.email}`}>
                        Rules
                      </Link>
                      <ConfirmButton label={`Delete ${recipient.email}`} confirm={`Delete ${recipient.email}`} onConfirm={() => remove.mutate(recipient.id)}>
                        Delete
                      </ConfirmButton>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Page>
  );
}

function NewRecipient() {
  const [email, setEmail] = useState('');
  const [isDefault, setDefault] = useState(false);
  const create = useDeliveryChange('recipients', (client, body: { email: string; is_default: boolean }) =>
    unwrap(client.POST('/service/alert_system_setting_create_recipient/', { body })),
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate({ email: email.trim(), is_default: isDefault }, {
        onSuccess: () => {
          setEmail('');
          setDefault(false);
        },
      });
  };
  const error = create.error instanceof ApiError ? create.error : undefined;
  return (
    <form className="card" onSubmit={submit} noValidate aria-label="Add a recipient">
      <ErrorNotice error={create.error} title="Not added" fieldsShown={['email']} />
      <Field label="Email address" error={error?.fieldMessage('email')}>
        {(props) => <input {...props} type="email" autoComplete="off" required value={email} onChange={(event) => setEmail(event.target.value)} />}
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
