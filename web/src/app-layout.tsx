import { Link, Outlet, useRouter } from '@tanstack/react-router';
import { useEffect } from 'react';
import { useApi, useSession } from './api/api-context.tsx';
import { useAccount } from './auth/account.ts';
import { OrgSwitcher } from './auth/org-switcher.tsx';
import { navItems } from './nav.ts';
import { NewIncidentsCount } from './pages/incidents/new-incidents-count.tsx';

/** The frame of every signed-in page: skip link, header with navigation, organization, account. */
export function AppLayout() {
  const api = useApi();
  const session = useSession();
  const router = useRouter();
  const account = useAccount();

  // The session ended on this page (sign-out here or in another tab, refresh token expired):
  // loading the route again runs its check, which sends the visitor to the sign-in page.
  useEffect(() => {
    if (!session) void router.invalidate();
  }, [session, router]);
  if (!session) return null;

  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="app-header">
        <Link to="/" className="brand">
          Dragnet
        </Link>
        <nav aria-label="Main" className="app-nav">
          <ul>
            {navItems.map((item) => (
              <li key={item.to}>
                <Link
                  to={item.to}
                  activeOptions={{ exact: item.exact, includeSearch: false }}
                  activeProps={{ className: 'active' }}
                >
                  {item.label}
                  {item.to === '/incidents' && <NewIncidentsCount />}
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
