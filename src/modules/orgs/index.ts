// The organizations module's public surface.
export { createOrgsModule } from './orgs.module.ts';
export type { OrganizationService, OrganizationSettings } from './org.service.ts';
export type { UserRepository, UserRow } from './user.repository.ts';
export { normalizeEmail } from './user.service.ts';
