import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useApi, useScopedKey } from '../../api/api-context.tsx';
import { unwrap } from '../../api/client.ts';
import type { paths } from '../../api/schema.gen.ts';

/** The 201 of create: the key's fields and, this once, the key. */
export type CreatedApiKey =
  paths['/service/alert_system_api_key_create/']['post']['responses'][201]['content']['application/json'];

export const API_KEYS_PAGE_SIZE = 25;

/** One page of the organization's API keys (docs/api.md "API keys"), newest first. */
export function useApiKeys(page: number) {
  const { client } = useApi();
  return useQuery({
    queryKey: useScopedKey('api-keys', page),
    queryFn: () =>
      unwrap(
        client.GET('/service/alert_system_api_key_list/', {
          params: { query: { page, page_size: API_KEYS_PAGE_SIZE } },
        }),
      ),
  });
}

/** Create or revoke, then read the list again. */
function useApiKeyChange<Input, Output>(change: (input: Input) => Promise<Output>) {
  const queryClient = useQueryClient();
  const scope = useScopedKey();
  return useMutation({
    mutationFn: change,
    onSuccess: () => queryClient.invalidateQueries({ queryKey: [...scope, 'api-keys'] }),
  });
}

export interface ApiKeyInput {
  name: string;
  scope: 'read' | 'read_write';
  expires_at: string | null;
}

export const useCreateApiKey = () => {
  const { client } = useApi();
  return useApiKeyChange((body: ApiKeyInput) => unwrap(client.POST('/service/alert_system_api_key_create/', { body })));
};

export const useRevokeApiKey = () => {
  const { client } = useApi();
  return useApiKeyChange((id: number) =>
    unwrap(client.POST('/service/alert_system_api_key_revoke/{id}/', { params: { path: { id } } })),
  );
};
