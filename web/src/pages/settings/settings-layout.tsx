import { Link, Outlet } from '@tanstack/react-router';

/** The settings sections, in order. A new section adds its route (router.tsx) and entry here. */
const sections = [
  { to: '/settings/security', label: 'Security' },
  { to: '/settings/recipients', label: 'Recipients' },
  { to: '/settings/senders', label: 'Senders' },
  { to: '/settings/templates', label: 'Email templates' },
  { to: '/settings/webhooks', label: 'Webhooks' },
  { to: '/settings/siem', label: 'SIEM forwarding' },
  { to: '/settings/defaults', label: 'Defaults' },
  { to: '/settings/usage', label: 'Usage' },
  { to: '/settings/api-keys', label: 'API keys' },
] as const;

export function SettingsLayout() {
  return (
    <div className="settings-layout">
      <nav aria-label="Settings" className="settings-nav">
        <ul>
          {sections.map((section) => (
            <li key={section.to}>
              <Link to={section.to} activeProps={{ className: 'active' }}>
                {section.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <div>
        <Outlet />
      </div>
    </div>
  );
}
