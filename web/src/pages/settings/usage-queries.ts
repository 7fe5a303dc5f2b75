import { useQuery } from '@tanstack/react-query';
import { useApi, useScopedKey } from '../../api/api-context.tsx';
import { unwrap } from '../../api/client.ts';

/** Every limit of the organization with its use (spec 2.11), read again each minute. */
export function useUsage() {
  const { client } = useApi();
  return useQuery({
    queryKey: useScopedKey('usage'),
    queryFn: () => unwrap(client.GET('/service/get_usage_limits/', { params: { query: {} } })),
    refetchInterval: 60_000,
  });
}
