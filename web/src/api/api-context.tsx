import { useQueryClient } from '@tanstack/react-query';
import { createContext, useContext, useEffect, useSyncExternalStore, type ReactNode } from 'react';
import type { Api } from './client.ts';
import type { SessionState } from './session.ts';

const ApiContext = createContext<Api | null>(null);

/** Provides the API client and keeps the access token fresh while mounted. */
export function ApiProvider({ api, children }: { api: Api; children: ReactNode }) {
  const queryClient = useQueryClient();
  useEffect(() => api.startBackgroundRefresh(), [api]);
  // Data of one account must not show for the next one signing in on this browser.
  useEffect(() => api.session.subscribe(() => api.session.get() || queryClient.clear()), [api, queryClient]);
  return <ApiContext.Provider value={api}>{children}</ApiContext.Provider>;
}

export function useApi(): Api {
  const api = useContext(ApiContext);
  if (!api) throw new Error('useApi outside <ApiProvider>');
  return api;
}

export function useSession(): SessionState | null {
  const { session } = useApi();
  return useSyncExternalStore(session.subscribe, session.get);
}

/**
 * Query keys scoped to the organization the dashboard acts for, so switching organizations never
 * shows another organization's cached data: `useQuery({ queryKey: useScopedKey('rules', page) })`.
 */
export function useScopedKey<const Parts extends readonly unknown[]>(...parts: Parts) {
  return scopedKey(useSession(), ...parts);
}

/** useScopedKey outside components (a route loader): the key for the session's organization. */
export function scopedKey<const Parts extends readonly unknown[]>(session: SessionState | null, ...parts: Parts) {
  return ['org', session?.orgId ?? 'own', ...parts] as const;
}
