import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireAuth } from '../../http/auth.plugin.ts';
import { Nullable, OrgIdQuery, withErrors } from '../../http/schemas.ts';
import type { OrganizationService } from './org.service.ts';
import type { UserService } from './user.service.ts';

const Organization = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  alert_rule_limit: Type.Integer({ description: 'Maximum active monitoring rules' }),
  used_credits: Type.Integer({ description: 'Dashboard usage credits (not rate limiting)' }),
  default_frequency: Type.String({ description: 'Frequency of new rules that do not name one' }),
  dashboard_url: Type.String({ description: 'Base of links in notifications' }),
  managed_by_org_id: Nullable(Type.Integer(), { description: 'The managing MSSP organization' }),
  created_at: Type.String({ format: 'date-time' }),
});

const Account = Type.Object({
  id: Type.Integer(),
  email: Type.String(),
  org_id: Type.Integer(),
  organization: Type.String(),
  role: Type.String({ description: '"member", or "system" for operator accounts that act for every organization' }),
  is_active: Type.Boolean(),
  two_factor_enabled: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
  last_login_at: Nullable(Type.String({ format: 'date-time' })),
});

export function organizationRoutes(deps: {
  organizations: OrganizationService;
  users: UserService;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/service/organization/',
      {
        schema: {
          operationId: 'getOrganization',
          tags: ['organizations'],
          summary: 'The organization this request acts for',
          querystring: Type.Object({ org_id: OrgIdQuery }),
          response: withErrors({ 200: Organization }, [400, 401, 403, 404]),
        },
      },
      (request) => deps.organizations.get(requireAuth(request).orgId),
    );

    app.get(
      '/service/organizations/',
      {
        schema: {
          operationId: 'listOrganizations',
          tags: ['organizations'],
          summary: "The caller's organization and every organization it manages",
          response: withErrors({ 200: Type.Object({ items: Type.Array(Organization), total: Type.Integer() }) }, [401]),
        },
      },
      async (request) => {
        const items = await deps.organizations.listVisible(requireAuth(request).user);
        return { items, total: items.length };
      },
    );

    app.get(
      '/service/account/',
      {
        schema: {
          operationId: 'getAccount',
          tags: ['auth'],
          summary: 'The authenticated user',
          response: withErrors({ 200: Account }, [401]),
        },
      },
      (request) => deps.users.toView(requireAuth(request).user),
    );
  };
}
