import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useApi } from '../../api/api-context.tsx';
import { unwrap } from '../../api/client.ts';
import { saveFile } from '../../api/download.ts';
import { ApiError } from '../../api/errors.ts';
import { Field } from '../../ui/field.tsx';
import { ErrorNotice } from '../../ui/notices.tsx';

/**
 * 2FA enrolment (spec 3.1): setup_2fa gives a seed and its QR code; a current code from the
 * authenticator app confirms it (verify_2fa_enrollment), which answers ten backup codes, shown
 * this once.
 */
export function TwoFactorSetup({ enabled }: { enabled: boolean }) {
  const { client } = useApi();
  const queryClient = useQueryClient();
  const [code, setCode] = useState('');
  const setup = useMutation({ mutationFn: () => unwrap(client.POST('/service/setup_2fa/')) });
  const verify = useMutation({
    mutationFn: (otp: string) => unwrap(client.POST('/service/verify_2fa_enrollment/', { body: { otp } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['account'] }),
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    verify.mutate(code.replace(/\s+/g, ''));
  };

  if (verify.data) return <BackupCodes codes={verify.data.backup_codes} />;
  return (
    <section aria-labelledby="two-factor-heading" className="card">
      <h2 id="two-factor-heading">Two-factor authentication</h2>
      {enabled ? (
        <p>On. Signing in asks for a code from your authenticator app or one of your backup codes.</p>
      ) : !setup.data ? (
        <>
          <p>Off. With it on, signing in also asks for a code from an authenticator app on your phone.</p>
          <ErrorNotice error={setup.error} />
          <button type="button" className="primary" onClick={() => setup.mutate()} disabled={setup.isPending}>
            Set up two-factor authentication
          </button>
        </>
      ) : (
        <form onSubmit={submit} noValidate>
          <p>Scan this QR code with your authenticator app, or enter the key by hand.</p>
          <img className="qr" src={setup.data.qr_code_image} alt="QR code to add Dragnet to an authenticator app" width={192} height={192} />
          <p>
            Key: <code aria-label="Key for manual entry">{setup.data.seed.replace(/(.{4})/g, '$1 ').trim()}</code>
          </p>
          <ErrorNotice error={verify.error} fieldsShown={['otp']} />
          <Field
            label="Code from the app"
            hint="Six digits; the app shows a new one every 30 seconds."
            error={verify.error instanceof ApiError ? (verify.error.fieldMessage('otp') ?? undefined) : undefined}
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

function BackupCodes({ codes }: { codes: string[] }) {
  return (
    <section aria-labelledby="backup-codes-heading" className="card">
      <h2 id="backup-codes-heading">Two-factor authentication is on</h2>
      <p className="notice warning" role="status">
        Save these backup codes now: each signs you in once without the app, and they are not shown again.
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
        <button type="button" onClick={() => saveFile(new Blob([codes.join('\n') + '\n'], { type: 'text/plain' }), 'dragnet-backup-codes.txt')}>
          Download
        </button>
      </div>
    </section>
  );
}
