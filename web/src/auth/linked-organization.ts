import type { QueryClient } from '@tanstack/react-query';
import type { Api } from '../api/client.ts';
import { accountQuery, organizationsQuery } from './account.ts';

/**
 * A link that names its organization (a notification's `?org=<id>`, docs/api.md "The incident
 * link"): an MSSP analyst opening a client's incident acts for that client at once, instead of
 * seeing "not found" until they switch. An organization this account does not manage changes
 * nothing, so its match stays "not found" as any other organization's.
 */
export async function actForLinkedOrganization(context: { api: Api; queryClient: QueryClient }, orgId: number) {
  const { api, queryClient } = context;
  const [account, organizations] = await Promise.all([
    queryClient.fetchQuery(accountQuery(api)),
    queryClient.fetchQuery(organizationsQuery(api)),
  ]);
  if (!organizations.items.some((org) => org.id === orgId)) return;
  const actingFor = orgId === account.org_id ? null : orgId;
  if (api.session.get()?.orgId !== actingFor) api.session.setOrg(actingFor);
}
