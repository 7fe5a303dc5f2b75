import type { Store } from '../../db/store.ts';
import type { Clock } from '../../lib/clock.ts';
import { createOrganizationRepository } from './org.repository.ts';
import { organizationRoutes } from './org.routes.ts';
import { createOrganizationService } from './org.service.ts';
import { createUserRepository } from './user.repository.ts';
import { createUserService } from './user.service.ts';

export function createOrgsModule(deps: {
  store: Store;
  clock: Clock;
  defaults: { alertRuleLimit: number; dashboardUrl: string };
}) {
  const userRepository = createUserRepository(deps.store.db, () => deps.store.changeStamp('users'));
  const organizations = createOrganizationService({
    organizations: createOrganizationRepository(deps.store.db, () => deps.store.changeStamp('organizations')),
    clock: deps.clock,
    defaults: deps.defaults,
  });
  const users = createUserService({ users: userRepository, organizations, clock: deps.clock });
  return { organizations, users, userRepository, routes: organizationRoutes({ organizations, users }) };
}
