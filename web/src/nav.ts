/** The main navigation, in order. A new section adds its entry here. */
export const navItems = [
  { to: '/', label: 'Home', exact: true },
  { to: '/search', label: 'Search', exact: true },
  { to: '/search/history', label: 'History', exact: false },
  { to: '/search/quick', label: 'Quick searches', exact: false },
  { to: '/search/sources', label: 'Source search', exact: false },
  { to: '/incidents', label: 'Incidents', exact: false },
  { to: '/rules', label: 'Rules', exact: false },
  { to: '/settings', label: 'Settings', exact: false },
] as const;
