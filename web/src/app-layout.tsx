import { Link, Navigate, Outlet, useLocation } from '@tanstack/react-router';
import { useApi, useSession } from './api/api-context.tsx';
import { useAccount } from './auth/account.ts';
import { OrgSwitcher } from './auth/org-switcher.tsx';
import { navItems } from './nav.ts';

/** The frame of every signed-in page: skip link, header with navigation, organization, account. */
export function AppLayout() {
  const api = useApi();
  const session = useSession();
  const location = useLocation();
  const account = useAccount();

  // The session ended on this page (sign-out in another tab, refresh token expired).
  if (!session) {
    const expired = api.session.lastSignOutReason() === 'expired';
    return <Navigate to="/sign-in" search={expired ? { redirect: location.href } : {}} replace />;
  }

  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="app-header">
        <Link to="/search" className="brand">
          Dragnet
        </Link>
        <nav aria-label="Main" className="app-nav">
          <ul>
            {navItems.map((item) => (
              <li key={item.to}>
                <Link to={item.to} activeOptions={{ exact: item.exact, includeSearch: false }} activeProps={{ className: 'active' }}>
                  {item.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div className="app-account">
          <OrgSwitcher />
          {account.data && <span className="who">{account.data.email}</span>}
          <button type="button" onClick={() => api.signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <Outlet />
      </main>
    </>
  );
}
