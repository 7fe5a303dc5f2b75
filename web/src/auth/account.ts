import { queryOptions, useQuery } from '@tanstack/react-query';
import { useApi } from '../api/api-context.tsx';
import { unwrap, type Api } from '../api/client.ts';

const FIVE_MINUTES = 5 * 60_000;

/** The signed-in user (GET /service/account/): email, own organization, whether 2FA is on. */
export const accountQuery = (api: Api) =>
  queryOptions({
    queryKey: ['account'],
    queryFn: () => unwrap(api.client.GET('/service/account/')),
    staleTime: FIVE_MINUTES,
  });

/** The organizations this account may act for (GET /service/organizations/): its own, and an MSSP's or system account's others. */
export const organizationsQuery = (api: Api) =>
  queryOptions({
    queryKey: ['organizations'],
    queryFn: () => unwrap(api.client.GET('/service/organizations/')),
    staleTime: FIVE_MINUTES,
  });

export function useAccount() {
  return useQuery(accountQuery(useApi()));
}

export function useOrganizations() {
  return useQuery(organizationsQuery(useApi()));
}
