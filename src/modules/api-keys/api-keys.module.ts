import type { Store } from '../../db/store.ts';
import type { Clock } from '../../lib/clock.ts';
import type { KeyRing } from '../../lib/crypto.ts';
import type { BackgroundTasks } from '../../lib/log.ts';
import type { AuditLog } from '../audit/index.ts';
import type { OrganizationService, UserRepository } from '../orgs/index.ts';
import { createApiKeyRepository } from './api-key.repository.ts';
import { apiKeyRoutes } from './api-key.routes.ts';
import { createApiKeyService } from './api-key.service.ts';

export function createApiKeysModule(deps: {
  store: Store;
  keys: KeyRing;
  clock: Clock;
  orgs: { userRepository: UserRepository; organizations: OrganizationService };
  audit: AuditLog;
  background: BackgroundTasks;
}) {
  const repository = createApiKeyRepository({
    db: deps.store.db,
    changeStamp: () => deps.store.changeStamp('api_keys'),
  });
  const { orgs, ...rest } = deps;
  const service = createApiKeyService({
    ...rest,
    users: orgs.userRepository,
    organizations: orgs.organizations,
    repository,
  });
  return { service, routes: apiKeyRoutes(service) };
}
