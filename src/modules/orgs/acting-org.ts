import { AppError } from '../../lib/errors.ts';
import type { MaybePromise } from '../../lib/maybe-promise.ts';
import type { OrganizationRepository, OrganizationRow } from './org.repository.ts';
import type { UserRow } from './user.repository.ts';

type Caller = Pick<UserRow, 'org_id' | 'role'>;

/** MSSP resolution: which organizations a user may act for besides their own. */
export function createActingOrgResolver(deps: { organizations: OrganizationRepository }) {
  const { organizations } = deps;

  /** An organization other than the caller's own: allowed for system users and managing MSSPs. */
  async function resolveManagedOrg(user: Caller, requestedOrgId: number): Promise<number> {
    const target = await organizations.findById(requestedOrgId);
    const allowed = target && (user.role === 'system' || target.managed_by_org_id === user.org_id);
    if (!allowed) {
      const managesAny = user.role === 'system' || (await organizations.listManagedBy(user.org_id)).length > 0;
      if (!managesAny) {
        throw new AppError('forbidden', 'only MSSP or system accounts may act for another organization (org_id)', {
          fields: [{ field: 'org_id', message: 'not allowed for this account' }],
        });
      }
      throw new AppError('not_found', 'organization not found among those this account manages', {
        fields: [{ field: 'org_id', message: 'not managed by this account' }],
      });
    }
    return target.id;
  }

  return {
    /**
     * The organization a request acts for. Everyone acts for their own; a system user may act
     * for any organization and an MSSP user for the organizations its organization manages.
     * An organization the caller may not see is a 404, as for any other org-scoped id.
     */
    resolveActingOrg(user: Caller, requestedOrgId: number | undefined): MaybePromise<number> {
      // Nearly every request acts for the caller's own organization: answered without a read.
      if (requestedOrgId === undefined || requestedOrgId === user.org_id) return user.org_id;
      return resolveManagedOrg(user, requestedOrgId);
    },

    /** The caller's own organization and those it manages; every one for a system user. */
    async visibleOrganizations(user: Caller): Promise<OrganizationRow[]> {
      const rows =
        user.role === 'system'
          ? await organizations.list()
          : [await organizations.findById(user.org_id), ...(await organizations.listManagedBy(user.org_id))];
      return rows.filter((row): row is OrganizationRow => row !== undefined);
    },
  };
}
