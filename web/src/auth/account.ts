import { useQuery } from '@tanstack/react-query';
import { useApi } from '../api/api-context.tsx';
import { unwrap } from '../api/client.ts';

/** The signed-in user (GET /service/account/): email, own organization, whether 2FA is on. */
export function useAccount() {
  const { client } = useApi();
  return useQuery({
    queryKey: ['account'],
    queryFn: () => unwrap(client.GET('/service/account/')),
    staleTime: 5 * 60_000,
  });
}

/** The organizations this account may act for (GET /service/organizations/): its own, and an MSSP's or system account's others. */
export function useOrganizations() {
  const { client } = useApi();
  return useQuery({
    queryKey: ['organizations'],
    queryFn: () => unwrap(client.GET('/service/organizations/')),
    staleTime: 5 * 60_000,
  });
}
