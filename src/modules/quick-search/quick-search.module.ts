import { freshReads, type ReadRouter } from '../../db/read-replicas.ts';
import { createLeakQueries, type SourceContext } from '../sources/index.ts';
import type { LimitResolver, RateLimiter } from '../usage/index.ts';
import { createQuickSearchRepository } from './quick-search.repository.ts';
import { quickSearchRoutes } from './quick-search.routes.ts';
import { sourceFreshnessRoutes } from './source-freshness.routes.ts';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';

export function createQuickSearchModule(deps: {
  context: SourceContext;
  /** Where the leak lookups read: a replica as fresh as the primary, or the primary. */
  reads: ReadRouter;
  limiter: RateLimiter;
  limits: LimitResolver;
}) {
  const searches = quickSearchRoutes({
    leaks: freshReads(deps.reads, createLeakQueries(deps.context)),
    limiter: deps.limiter,
    limits: deps.limits,
    capacity: createQuickSearchRepository(deps.context.db),
  });
  const freshness = sourceFreshnessRoutes(deps.context);
  return {
    routes: (async (app) => {
      await app.register(searches);
      await app.register(freshness);
    }) satisfies FastifyPluginAsyncTypebox,
  };
}
