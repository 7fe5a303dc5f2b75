import { useNavigate, useLocation } from '@tanstack/react-router';
import { useId } from 'react';
import { useApi, useSession } from '../api/api-context.tsx';
import { useAccount, useOrganizations } from './account.ts';

/**
 * The organization the dashboard acts for. Shown to MSSP and system accounts, which see more than
 * their own organization in GET /service/organizations/; every request then carries X-Org-Id
 * (docs/api.md "Organizations and MSSPs"), and cached data is keyed by it (useScopedKey).
 */
export function OrgSwitcher() {
  const api = useApi();
  const session = useSession();
  const account = useAccount();
  const navigate = useNavigate();
  const { pathname } = useLocation();
  const id = useId();
  const organizations = useOrganizations();
  const own = account.data?.org_id;
  const items = organizations.data?.items ?? [];
  if (own === undefined || items.length < 2) return null;

  const choose = (orgId: number) => {
    api.session.setOrg(orgId === own ? null : orgId);
    // What the page showed (a search, a rule) belongs to the organization it came from.
    void navigate({ to: pathname, search: {} as never });
  };
  return (
    <span className="check">
      <label htmlFor={id}>Organization</label>
      <select id={id} value={session?.orgId ?? own} onChange={(event) => choose(Number(event.target.value))}>
        {items.map((org) => (
          <option key={org.id} value={org.id}>
            {org.name}
            {org.id === own ? ' (yours)' : ''}
          </option>
        ))}
      </select>
    </span>
  );
}
