// The audit module's public surface.
export { createAuditModule } from './audit.module.ts';
export {
  cliOrigin,
  requestOrigin,
  userTarget,
  type AuditDetails,
  type AuditLog,
  type AuditOrigin,
} from './audit.service.ts';
export type { AuditEventName } from './audit.schemas.ts';
