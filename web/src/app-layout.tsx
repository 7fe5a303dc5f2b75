import { Link, Outlet, useRouter } from '@tanstack/react-router';
import { useEffect } from 'react';
import { useApi, useSession } from './api/api-context.tsx';
import { useAccount } from './auth/account.ts';
import { OrgSwitcher } from './auth/org-switcher.tsx';
import { navItems } from './nav.ts';
import { NewIncidentsCount } from './pages/incidents/new-incidents-count.tsx';
import { useTimeZoneChoice } from './ui/time-zone.ts';
import { TimeZoneSwitch } from './ui/time-zone-switch.tsx';

/** The frame of every signed-in page: skip link, header with navigation, organization, account. */
export function AppLayout() {
  const session = useSession();
  const router = useRouter();

  // The session ended on this page (sign-out here or in another tab, refresh token expired):
  // loading the route again runs its check, which sends the visitor to the sign-in page.
  useEffect(() => {
    if (!session) void router.invalidate();
  }, [session, router]);
  // Nothing that reads the API stays mounted without a session: its query, emptied by the
  // sign-out, would be asked again without a token (a 401 on every sign-out).
  return session ? <SignedInFrame /> : null;
}

function SignedInFrame() {
  const api = useApi();
  const account = useAccount();
  // Pages format their times as they draw: a new choice of zone draws them again.
  const timeZone = useTimeZoneChoice();
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
          <TimeZoneSwitch />
          {account.data && <span className="who">{account.data.email}</span>}
          <button type="button" onClick={() => api.signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1} key={timeZone}>
        <Outlet />
      </main>
    </>
  );
}
