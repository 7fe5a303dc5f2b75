import { useAccount } from '../../auth/account.ts';
import { ErrorNotice, Loading } from '../../ui/notices.tsx';
import { Page } from '../../ui/page.tsx';
import { PasswordForm } from './password-form.tsx';
import { TwoFactorSetup } from './two-factor-setup.tsx';

/** Settings → Security: the account, two-factor authentication, the password. */
export function SecurityPage() {
  const account = useAccount();
  return (
    <Page title="Security">
      {account.isPending && <Loading />}
      <ErrorNotice error={account.error} />
      {account.data && (
        <>
          <p>
            Signed in as <strong>{account.data.email}</strong> ({account.data.organization}).
          </p>
          <TwoFactorSetup enabled={account.data.two_factor_enabled} />
          <PasswordForm />
        </>
      )}
    </Page>
  );
}
