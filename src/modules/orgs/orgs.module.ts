import type { Config } from '../../config.ts';
import type { Store } from '../../db/store.ts';
import type { Clock } from '../../lib/clock.ts';
import { createDashboardAddress } from './dashboard-address.ts';
import { createOrganizationRepository } from './org.repository.ts';
import { organizationRoutes } from './org.routes.ts';
import { createOrganizationService } from './org.service.ts';
import { createUserRepository } from './user.repository.ts';
import { createUserService } from './user.service.ts';

export async function createOrgsModule(deps: {
  store: Store;
  clock: Clock;
  config: Pick<Config, 'defaultAlertRuleLimit' | 'dashboardUrl' | 'serverUrl'>;
}) {
  const dashboardAddress = createDashboardAddress({
    db: deps.store.db,
    clock: deps.clock,
    configured: deps.config.dashboardUrl,
    ownServerUrl: deps.config.serverUrl,
  });
  await dashboardAddress.load();
  const userRepository = createUserRepository(deps.store.db, () => deps.store.changeStamp('users'));
  const organizations = createOrganizationService({
    organizations: createOrganizationRepository(deps.store.db, () => deps.store.changeStamp('organizations')),
    clock: deps.clock,
    defaults: {
      alertRuleLimit: deps.config.defaultAlertRuleLimit,
      get dashboardUrl() {
        return dashboardAddress.url;
      },
    },
  });
  const users = createUserService({ users: userRepository, organizations, clock: deps.clock });
  return {
    organizations,
    users,
    userRepository,
    dashboardAddress,
    routes: organizationRoutes({ organizations, users }),
  };
}
