import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { Clock } from '../../lib/clock.ts';
import { auditRoutes } from './audit.routes.ts';
import { createAuditLog } from './audit.service.ts';

export function createAuditModule(deps: { db: Kysely<Database>; clock: Clock }) {
  const log = createAuditLog(deps);
  return { log, routes: auditRoutes(log) };
}
