import { useState, type FormEvent } from 'react';
import { saveFile } from '../../api/download.ts';
import { ApiError } from '../../api/errors.ts';
import { OtpInput } from '../../auth/otp-input.tsx';
import { Field } from '../../ui/field.tsx';
import { ErrorNotice } from '../../ui/notices.tsx';
import { useDisableTwoFactor, useNewBackupCodes, useSetUpTwoFactor, useVerifyTwoFactor } from './security-queries.ts';

const fieldError = (error: unknown, field: string) =>
  error instanceof ApiError ? (error.fieldMessage(field) ?? undefined) : undefined;

/** The current password, which every change to 2FA asks for (docs/api.md "2FA"). */
function PasswordField(props: { value: string; onChange: (value: string) => void; error: unknown }) {
  return (
    <Field label="Your password" error={fieldError(props.error, 'password')}>
      {(control) => (
        <input
          {...control}
          type="password"
          autoComplete="current-password"
          required
          value={props.value}
          onChange={(event) => props.onChange(event.target.value)}
        />
      )}
    </Field>
  );
}

/**
 * 2FA enrolment (spec 3.1): setup_2fa, with the current password, gives a seed and its QR code;
 * a current code from the authenticator app confirms it (verify_2fa_enrollment), which answers
 * ten backup codes, shown this once, and new tokens: every other session has been signed out.
 */
export function TwoFactorSetup({ enabled }: { enabled: boolean }) {
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const setup = useSetUpTwoFactor(() => setPassword(''));
  const verify = useVerifyTwoFactor();

  const start = (event: FormEvent) => {
    event.preventDefault();
    setup.mutate(password);
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    verify.mutate(code.replace(/\s+/g, ''));
  };

  if (verify.data) {
    return (
      <BackupCodes codes={verify.data.backup_codes} title="Two-factor authentication is on">
        Other devices signed in to this account have been signed out.
      </BackupCodes>
    );
  }
  if (enabled) return <TwoFactorSettings />;
  return (
    <section aria-labelledby="two-factor-heading" className="card">
      <h2 id="two-factor-heading">Two-factor authentication</h2>
      {!setup.data ? (
        <form onSubmit={start} noValidate>
          <p>Off. With it on, signing in also asks for a code from an authenticator app on your phone.</p>
          <ErrorNotice error={setup.error} fieldsShown={['password']} />
          <PasswordField value={password} onChange={setPassword} error={setup.error} />
          <button type="submit" className="primary" disabled={setup.isPending}>
            Set up two-factor authentication
          </button>
        </form>
      ) : (
        <form onSubmit={submit} noValidate>
          <p>Scan this QR code with your authenticator app, or enter the key by hand.</p>
          <img
            className="qr"
            src={setup.data.qr_code_image}
            alt="QR code to add Dragnet to an authenticator app"
            width={192}
            height={192}
          />
          <p>
            Key: <code aria-label="Key for manual entry">{setup.data.seed.replace(/(.{4})/g, '$1 ').trim()}</code>
          </p>
          <ErrorNotice error={verify.error} fieldsShown={['otp']} />
          <Field
            label="Code from the app"
            hint="Six digits; the app shows a new one every 30 seconds."
            error={fieldError(verify.error, 'otp')}
          >
            {(props) => (
              <input
                {...props}
                inputMode="numeric"
                autoComplete="one-time-code"
                required
                value={code}
                onChange={(event) => setCode(event.target.value)}
              />
            )}
          </Field>
          <button type="submit" className="primary" disabled={verify.isPending || !code.trim()}>
            Turn on
          </button>
        </form>
      )}
    </section>
  );
}

/**
 * 2FA on: new backup codes (new_backup_codes) or 2FA off (disable_2fa), each with the password and
 * a code from the app or a backup code, so a session left open is not enough for either.
 */
function TwoFactorSettings() {
  const empty = { password: '', otp: '' };
  const [values, setValues] = useState(empty);
  const body = () => ({ password: values.password, otp: values.otp.trim() });
  const renew = useNewBackupCodes(() => setValues(empty));
  const disable = useDisableTwoFactor();
  const error = renew.error ?? disable.error;
  const submitRenew = (event: FormEvent) => {
    event.preventDefault();
    disable.reset();
    renew.mutate(body());
  };
  const turnOff = () => {
    renew.reset();
    disable.mutate(body());
  };

  if (renew.data) {
    return (
      <BackupCodes codes={renew.data.backup_codes} title="New backup codes">
        Your earlier backup codes no longer work.
      </BackupCodes>
    );
  }
  return (
    <section aria-labelledby="two-factor-heading" className="card">
      <h2 id="two-factor-heading">Two-factor authentication</h2>
      <p>On. Signing in asks for a code from your authenticator app or one of your backup codes.</p>
      <form onSubmit={submitRenew} noValidate>
        <ErrorNotice error={error} fieldsShown={['password', 'otp']} />
        <PasswordField
          value={values.password}
          onChange={(password) => setValues((current) => ({ ...current, password }))}
          error={error}
        />
        <Field label="Code from the app or a backup code" error={fieldError(error, 'otp')}>
          {(props) => (
            <OtpInput {...props} value={values.otp} onChange={(otp) => setValues((current) => ({ ...current, otp }))} />
          )}
        </Field>
        <div className="actions">
          <button type="submit" disabled={renew.isPending || disable.isPending}>
            New backup codes
          </button>
          <button type="button" className="danger" onClick={turnOff} disabled={renew.isPending || disable.isPending}>
            Turn off two-factor authentication
          </button>
        </div>
      </form>
    </section>
  );
}

function BackupCodes({ codes, title, children }: { codes: string[]; title: string; children: string }) {
  return (
    <section aria-labelledby="backup-codes-heading" className="card">
      <h2 id="backup-codes-heading">{title}</h2>
      <p className="notice warning" role="status">
        Save these backup codes now: each signs you in once without the app, and they are not shown again. {children}
      </p>
      <ol className="codes" aria-label="Backup codes">
        {codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ol>
      <div className="actions">
        <button type="button" onClick={() => void navigator.clipboard?.writeText(codes.join('\n'))}>
          Copy
        </button>
        <button
          type="button"
          onClick={() =>
            saveFile(new Blob([codes.join('\n') + '\n'], { type: 'text/plain' }), 'dragnet-backup-codes.txt')
          }
        >
          Download
        </button>
      </div>
    </section>
  );
}
