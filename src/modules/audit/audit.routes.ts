import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireAuth } from '../../http/auth.plugin.ts';
import { withErrors } from '../../http/schemas.ts';
import { linkedPage, pageWindow } from '../../lib/pagination.ts';
import { AuditLogPage, AuditLogQuery } from './audit.schemas.ts';
import type { AuditLog } from './audit.service.ts';

const PATH = '/service/audit_log/';

export function auditRoutes(audit: AuditLog): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      PATH,
      {
        schema: {
          operationId: 'listAuditLog',
          tags: ['audit'],
          summary:
            "The organization's security events (logins, 2FA, passwords, users, senders, webhooks, rule deletions), newest first",
          querystring: AuditLogQuery,
          response: withErrors({ 200: AuditLogPage }, [400, 401, 403, 404, 429]),
        },
      },
      async (request) => {
        const { event, org_id: orgId } = request.query;
        const { results, total } = await audit.list(requireAuth(request).orgId, {
          event,
          ...pageWindow(request.query),
        });
        return linkedPage(PATH, request.query, total, results, { event, org_id: orgId });
      },
    );
  };
}
