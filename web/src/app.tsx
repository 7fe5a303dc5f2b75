import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { RouterProvider, type RouterHistory } from '@tanstack/react-router';
import { useState } from 'react';
import { ApiProvider } from './api/api-context.tsx';
import type { Api } from './api/client.ts';
import { ApiError } from './api/errors.ts';
import { createAppRouter } from './router.tsx';

/**
 * Worth asking again: network trouble, a 5xx, and a 429 that says to wait a few seconds (the
 * account-wide 25 requests per second). Any other 4xx would answer the same.
 */
function isTransient(error: unknown): boolean {
  if (!(error instanceof ApiError)) return true;
  if (error.status === 429) return (error.retryAfterSeconds ?? Infinity) <= 5;
  return error.status === 0 || error.status >= 500;
}

function createQueryClient() {
  return new QueryClient({
    defaultOptions: {
      queries: {
        staleTime: 30_000,
        retry: (failures, error) => failures < 2 && isTransient(error),
        retryDelay: (failures, error) =>
          error instanceof ApiError && error.retryAfterSeconds !== undefined
            ? error.retryAfterSeconds * 1000
            : 1000 * 2 ** failures,
        refetchOnWindowFocus: false,
      },
    },
  });
}

/** The whole dashboard: data cache, API client and router. Tests pass a memory history. */
export function App({ api, history }: { api: Api; history?: RouterHistory }) {
  const [queryClient] = useState(createQueryClient);
  const [router] = useState(() => createAppRouter({ session: api.session, api, queryClient, history }));
  return (
    <QueryClientProvider client={queryClient}>
      <ApiProvider api={api}>
        <RouterProvider router={router} />
      </ApiProvider>
    </QueryClientProvider>
  );
}
