import { useState, type FormEvent } from 'react';
import { ApiError } from '../../api/errors.ts';
import { Field } from '../../ui/field.tsx';
import { ErrorNotice } from '../../ui/notices.tsx';
import { useChangePassword } from './security-queries.ts';

const FIELDS = ['password', 'new_password', 'confirm_new_password'] as const;

/**
 * Password change (spec 4.1 new_password). The server revokes every earlier token and answers a
 * new pair, which this session carries on with; other devices must sign in again.
 */
export function PasswordForm() {
  const empty = { password: '', new_password: '', confirm_new_password: '' };
  const [values, setValues] = useState(empty);
  const change = useChangePassword(() => setValues(empty));
  const fieldError = (field: string) =>
    change.error instanceof ApiError ? change.error.fieldMessage(field) : undefined;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    change.mutate(values);
  };
  const labels: Record<(typeof FIELDS)[number], { label: string; autoComplete: string; hint?: string }> = {
    password: { label: 'Current password', autoComplete: 'current-password' },
    new_password: {
      label: 'New password',
      autoComplete: 'new-password',
      hint: '10 to 128 characters, at least 5 different ones, not containing your email address.',
    },
    confirm_new_password: { label: 'New password again', autoComplete: 'new-password' },
  };

  return (
    <section aria-labelledby="password-heading" className="card">
      <h2 id="password-heading">Password</h2>
      {change.isSuccess && (
        <p className="notice success" role="status">
          Password changed. Other devices signed in to this account have been signed out.
        </p>
      )}
      <ErrorNotice error={change.error} fieldsShown={[...FIELDS]} />
      <form onSubmit={submit} noValidate>
        {FIELDS.map((name) => (
          <Field key={name} label={labels[name].label} hint={labels[name].hint} error={fieldError(name)}>
            {(props) => (
              <input
                {...props}
                type="password"
                autoComplete={labels[name].autoComplete}
                required
                value={values[name]}
                onChange={(event) => setValues((current) => ({ ...current, [name]: event.target.value }))}
              />
            )}
          </Field>
        ))}
        <button type="submit" className="primary" disabled={change.isPending}>
          Change password
        </button>
      </form>
    </section>
  );
}
