import { useMutation } from '@tanstack/react-query';
import { getRouteApi, useRouter } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { useApi } from '../api/api-context.tsx';
import { ApiError } from '../api/errors.ts';
import { Field } from '../ui/field.tsx';
import { ErrorNotice } from '../ui/notices.tsx';
import { OtpInput } from './otp-input.tsx';
import { Page } from '../ui/page.tsx';

const route = getRouteApi('/sign-in');

/**
 * Email and password, then, when the server answers `otp_required` (the account has 2FA), a
 * second step for the authenticator code or a backup code (spec 5.1, 5.5). While someone else's
 * guesses slow the account down (429 `too_many_attempts`), only the password sent with a code
 * gets in at once, so the page offers that step then too (docs/api.md "Login throttling").
 */
export function SignInPage() {
  const api = useApi();
  const router = useRouter();
  const { redirect } = route.useSearch();
  const [expired] = useState(() => api.session.lastSignOutReason() === 'expired');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [otp, setOtp] = useState('');
  const [step, setStep] = useState<'password' | 'otp'>('password');

  const signIn = useMutation({
    mutationFn: (credentials: { email: string; password: string; otp?: string }) => api.signIn(credentials),
    onSuccess: () => router.history.push(redirect ?? '/search'),
    onError: (error) => {
      if (error instanceof ApiError && error.code === 'otp_required') setStep('otp');
    },
  });
  const otpRequested = signIn.error instanceof ApiError && signIn.error.code === 'otp_required';
  const slowedDown =
    step === 'password' && signIn.error instanceof ApiError && signIn.error.code === 'too_many_attempts';

  const submit = (event: FormEvent) => {
    event.preventDefault();
    signIn.mutate(step === 'otp' ? { email, password, otp: otp.trim() } : { email, password });
  };

  return (
    <main id="main" className="narrow">
      <Page title="Sign in to Dragnet">
        {expired && step === 'password' && (
          <p className="notice warning">Your session has expired. Sign in again to continue.</p>
        )}
        {!otpRequested && <ErrorNotice error={signIn.error} />}
        <form onSubmit={submit} className="card" noValidate>
          {step === 'password' ? (
            <>
              <Field label="Email">
                {(props) => (
                  <input
                    {...props}
                    type="email"
                    autoComplete="username"
                    required
                    autoFocus
                    value={email}
                    onChange={(e) => setEmail(e.target.value)}
                  />
                )}
              </Field>
              <Field label="Password">
                {(props) => (
                  <input
                    {...props}
                    type="password"
                    autoComplete="current-password"
                    required
                    value={password}
                    onChange={(e) => setPassword(e.target.value)}
                  />
                )}
              </Field>
            </>
          ) : (
            <Field
              label="Authentication code"
              hint="The 6-digit code from your authenticator app, or one of your backup codes."
            >
              {(props) => <OtpInput {...props} autoFocus value={otp} onChange={setOtp} />}
            </Field>
          )}
          <div className="actions">
            <button type="submit" className="primary" disabled={signIn.isPending}>
              {step === 'otp' ? 'Verify' : 'Sign in'}
            </button>
            {step === 'otp' && (
              <button
                type="button"
                onClick={() => {
                  setStep('password');
                  setOtp('');
                  signIn.reset();
                }}
              >
                Back
              </button>
            )}
            {slowedDown && (
              <button
                type="button"
                onClick={() => {
                  setStep('otp');
                  signIn.reset();
                }}
              >
                Sign in now with a 2FA code
              </button>
            )}
          </div>
        </form>
      </Page>
    </main>
  );
}
