import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireAuth } from '../../http/auth.plugin.ts';
import { OrgIdQuery, withErrors } from '../../http/schemas.ts';
import type { LimitResolver } from './limits.ts';
import type { RateLimiter } from './rate-limiter.ts';
import type { UsageCatalog } from './usage-catalog.ts';

const LimitEntry = Type.Object({
  period: Type.String({ description: 'Window label: 1 Second, 1 Day, 1 Month' }),
  limit: Type.Integer(),
  used: Type.Integer(),
  remaining: Type.Integer(),
  reset_seconds: Type.Integer({ description: 'Seconds until the window resets' }),
});

const UsageResponse = Type.Object({
  total: Type.Optional(Type.Array(LimitEntry, { description: 'Account-wide limits; only without filters' })),
  services: Type.Array(
    Type.Object({
      feature: Type.String(),
      service_name: Type.String(),
      service_slug: Type.String(),
      limits: Type.Array(LimitEntry),
    }),
  ),
});

export function usageRoutes(deps: {
  limiter: RateLimiter;
  limits: LimitResolver;
  catalog: UsageCatalog;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/service/get_usage_limits/',
      {
        schema: {
          operationId: 'getUsageLimits',
          tags: ['usage'],
          summary: 'Rate limits and their current use',
          querystring: Type.Object({
            service_slug: Type.Optional(
              Type.String({ maxLength: 200, description: 'Part of a service slug, case-insensitive' }),
            ),
            feature: Type.Optional(Type.String({ maxLength: 200, description: 'A feature name, case-insensitive' })),
            org_id: OrgIdQuery,
          }),
          response: withErrors({ 200: UsageResponse }, [400, 401, 403, 404, 429]),
        },
        config: { rateLimit: { service: 'get_usage_limits', name: 'Usage limits' } },
      },
      async (request) => {
        const { orgId } = requireAuth(request);
        const { service_slug: slugFilter, feature } = request.query;
        const services = deps.catalog
          .list()
          .filter((s) => !slugFilter || s.slug.toLowerCase().includes(slugFilter.toLowerCase()))
          .filter((s) => !feature || s.feature.toLowerCase() === feature.toLowerCase());
        const blocks = await Promise.all(
          services.map(async (s) => ({
            feature: s.feature,
            service_name: s.name,
            service_slug: s.slug,
            limits: await deps.limiter.usage(orgId, await deps.limits.service(orgId, s.slug)),
          })),
        );
        const filtered = slugFilter !== undefined || feature !== undefined;
        const account = filtered ? [] : await deps.limiter.usage(orgId, await deps.limits.account(orgId));
        // spec 2.11: `total` only without filters, and only when account-wide limits are set.
        return { ...(account.length ? { total: account } : {}), services: blocks };
      },
    );
  };
}
