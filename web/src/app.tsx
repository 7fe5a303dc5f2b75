import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { RouterProvider, type RouterHistory } from '@tanstack/react-router';
import { useState } from 'react';
import { ApiProvider } from './api/api-context.tsx';
import type { Api } from './api/client.ts';
import { ApiError } from './api/errors.ts';
import { createAppRouter } from './router.tsx';

function createQueryClient() {
  return new QueryClient({
    defaultOptions: {
      queries: {
        staleTime: 30_000,
        // A 4xx will answer the same again; only network trouble and 5xx are worth a retry.
        retry: (failures, error) => failures < 2 && !(error instanceof ApiError && error.status >= 400 && error.status < 500),
        refetchOnWindowFocus: false,
      },
    },
  });
}

/** The whole dashboard: data cache, API client and router. Tests pass a memory history. */
export function App({ api, history }: { api: Api; history?: RouterHistory }) {
  const [queryClient] = useState(createQueryClient);
  const [router] = useState(() => createAppRouter({ session: api.session, history }));
  return (
    <QueryClientProvider client={queryClient}>
      <ApiProvider api={api}>
        <RouterProvider router={router} />
      </ApiProvider>
    </QueryClientProvider>
  );
}
