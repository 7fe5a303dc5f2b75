import {
  createRootRouteWithContext,
  createRoute,
  createRouter,
  lazyRouteComponent,
  Outlet,
  redirect,
  type RouterHistory,
} from '@tanstack/react-router';
import type { QueryClient } from '@tanstack/react-query';
import type { Api } from './api/client.ts';
import type { SessionStore } from './api/session.ts';
import { AppLayout } from './app-layout.tsx';
import { actForLinkedOrganization } from './auth/linked-organization.ts';
import { validateSignInSearch } from './auth/sign-in-search.ts';
import { validateInboxSearch } from './pages/incidents/inbox-search.ts';
import { validateIncidentSearch } from './pages/incidents/incident-search.ts';
import { validateNewRuleSearch } from './pages/rules/new-rule-search.ts';
import { idParam, validateRulesSearch } from './pages/rules/rules-search.ts';
import { validateHistorySearch, validateSearchPageSearch } from './pages/search/search-params.ts';
import { searchResultsQuery } from './pages/search/search-queries.ts';
import { validateSourceSearchSearch } from './pages/search/source-search.ts';
import { ErrorNotice, Loading } from './ui/notices.tsx';
import { NotFoundPage } from './ui/not-found-page.tsx';

/**
 * The route map (web/README.md lists it). Pages are lazy chunks, loaded when first visited, so
 * the first load carries only the shell; their search parameters are validated by small modules
 * in the main chunk so links to them are typed.
 */
export interface RouterContext {
  session: SessionStore;
  api: Api;
  queryClient: QueryClient;
}

const rootRoute = createRootRouteWithContext<RouterContext>()({ component: Outlet });

const signInRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: '/sign-in',
  validateSearch: validateSignInSearch,
  beforeLoad: ({ context, search }) => {
    if (context.session.get()) throw redirect({ href: search.redirect ?? '/search' });
  },
  component: lazyRouteComponent(() => import('./auth/sign-in-page.tsx'), 'SignInPage'),
});

/** Every page but sign-in: needs a session; shows the header and the navigation. */
const appRoute = createRoute({
  getParentRoute: () => rootRoute,
  id: 'app',
  beforeLoad: ({ context: { session }, location }) => {
    if (session.get()) return;
    // After a sign-out the next person starts from the start; after an expiry, where they were.
    const back = session.lastSignOutReason() !== 'user';
    throw redirect({ to: '/sign-in', search: back ? { redirect: location.href } : {} });
  },
  component: AppLayout,
});

/** The home page: new incidents, matches over time, the busiest rules (pages/home/). */
const indexRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/',
  component: lazyRouteComponent(() => import('./pages/home/home-page.tsx'), 'HomePage'),
});

const searchRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/search',
  validateSearch: validateSearchPageSearch,
  loaderDeps: ({ search }) => ({ history: search.history }),
  // Asks for the results while the page's code loads, instead of after (not awaited: the page
  // draws its form at once and the results when they come).
  loader: ({ context, deps }) => {
    if (deps.history)
      void context.queryClient.prefetchInfiniteQuery(
        searchResultsQuery(context.api, context.session.get(), deps.history),
      );
  },
  component: lazyRouteComponent(() => import('./pages/search/search-page.tsx'), 'SearchPage'),
});

const searchHistoryRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/search/history',
  validateSearch: validateHistorySearch,
  component: lazyRouteComponent(() => import('./pages/search/history-page.tsx'), 'HistoryPage'),
});

/** Domain, email and accounts database searches of the credential store, with their quotas. */
const quickSearchRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/search/quick',
  component: lazyRouteComponent(() => import('./pages/search/quick-search-page.tsx'), 'QuickSearchPage'),
});

/** Any source with data searched by its own args over a past window (the rule preview). */
const sourceSearchRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/search/sources',
  validateSearch: validateSourceSearchSearch,
  component: lazyRouteComponent(() => import('./pages/search/source-search-page.tsx'), 'SourceSearchPage'),
});

/** Where "create a rule from this search" leads; the rules pages own it (web/README.md). */
const newRuleRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/rules/new',
  validateSearch: validateNewRuleSearch,
  component: lazyRouteComponent(() => import('./pages/rules/new-rule-page.tsx'), 'NewRulePage'),
});

const rulesRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/rules',
  validateSearch: validateRulesSearch,
  component: lazyRouteComponent(() => import('./pages/rules/rules-page.tsx'), 'RulesPage'),
});

const ruleRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/rules/$ruleId',
  params: {
    parse: ({ ruleId }) => ({ ruleId: idParam(ruleId) }),
    stringify: ({ ruleId }) => ({ ruleId: String(ruleId) }),
  },
  component: lazyRouteComponent(() => import('./pages/rules/rule-page.tsx'), 'RulePage'),
});

const editRuleRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/rules/$ruleId/edit',
  params: {
    parse: ({ ruleId }) => ({ ruleId: idParam(ruleId) }),
    stringify: ({ ruleId }) => ({ ruleId: String(ruleId) }),
  },
  component: lazyRouteComponent(() => import('./pages/rules/edit-rule-page.tsx'), 'EditRulePage'),
});

/** The incident inbox: every match of the organization's rules, to work (pages/incidents/). */
const inboxRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/incidents',
  validateSearch: validateInboxSearch,
  component: lazyRouteComponent(() => import('./pages/incidents/inbox-page.tsx'), 'InboxPage'),
});

/** Where a notification's {match_detail_link} and a webhook's results_url lead (src/modules/rules/notifier.ts). */
const incidentRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/incidents/$matchId',
  params: {
    parse: ({ matchId }) => ({ matchId: idParam(matchId) }),
    stringify: ({ matchId }) => ({ matchId: String(matchId) }),
  },
  validateSearch: validateIncidentSearch,
  beforeLoad: async ({ context, params, search: { org, ...search } }) => {
    if (org === undefined) return;
    await actForLinkedOrganization(context, org);
    throw redirect({ to: '/incidents/$matchId', params, search, replace: true });
  },
  component: lazyRouteComponent(() => import('./pages/incidents/incident-page.tsx'), 'IncidentPage'),
});

/** Links sent before the incident page existed. */
const legacyMatchRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/matches/$matchId',
  beforeLoad: ({ params }) => {
    throw redirect({ to: '/incidents/$matchId', params: { matchId: idParam(params.matchId) }, replace: true });
  },
});

const settingsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: '/settings',
  component: lazyRouteComponent(() => import('./pages/settings/settings-layout.tsx'), 'SettingsLayout'),
});

const settingsIndexRoute = createRoute({
  getParentRoute: () => settingsRoute,
  path: '/',
  beforeLoad: () => {
    throw redirect({ to: '/settings/security' });
  },
});

const securityRoute = createRoute({
  getParentRoute: () => settingsRoute,
  path: '/security',
  component: lazyRouteComponent(() => import('./pages/settings/security-page.tsx'), 'SecurityPage'),
});

/** Settings → one page per delivery resource, the defaults and the usage (pages/settings/). */
const settingsPage = <const Path extends string, Module extends Record<string, unknown>>(
  path: Path,
  load: () => Promise<Module>,
  name: keyof Module & string,
) => createRoute({ getParentRoute: () => settingsRoute, path, component: lazyRouteComponent(load, name) });

const settingsPages = [
  settingsPage('/recipients', () => import('./pages/settings/recipients-page.tsx'), 'RecipientsPage'),
  settingsPage('/senders', () => import('./pages/settings/senders-page.tsx'), 'SendersPage'),
  settingsPage('/templates', () => import('./pages/settings/templates-page.tsx'), 'TemplatesPage'),
  settingsPage('/webhooks', () => import('./pages/settings/webhooks-page.tsx'), 'WebhooksPage'),
  settingsPage('/siem', () => import('./pages/settings/siem-page.tsx'), 'SiemPage'),
  settingsPage('/defaults', () => import('./pages/settings/defaults-page.tsx'), 'DefaultsPage'),
  settingsPage('/usage', () => import('./pages/settings/usage-page.tsx'), 'UsagePage'),
  settingsPage('/api-keys', () => import('./pages/settings/api-keys-page.tsx'), 'ApiKeysPage'),
];

const routeTree = rootRoute.addChildren([
  signInRoute,
  appRoute.addChildren([
    indexRoute,
    searchRoute,
    searchHistoryRoute,
    quickSearchRoute,
    sourceSearchRoute,
    newRuleRoute,
    rulesRoute,
    ruleRoute,
    editRuleRoute,
    inboxRoute,
    incidentRoute,
    legacyMatchRoute,
    settingsRoute.addChildren([settingsIndexRoute, securityRoute, ...settingsPages]),
  ]),
]);

export function createAppRouter(options: RouterContext & { history?: RouterHistory }) {
  const { history, ...context } = options;
  return createRouter({
    routeTree,
    context,
    ...(history ? { history } : {}),
    defaultPreload: 'intent',
    defaultPendingComponent: () => <Loading />,
    defaultNotFoundComponent: NotFoundPage,
    defaultErrorComponent: ({ error }) => <ErrorNotice error={error} title="This page failed" />,
    scrollRestoration: true,
  });
}

declare module '@tanstack/react-router' {
  interface Register {
    router: ReturnType<typeof createAppRouter>;
  }
}
