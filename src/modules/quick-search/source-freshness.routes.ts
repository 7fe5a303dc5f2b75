import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireAuth } from '../../http/auth.plugin.ts';
import { Nullable, OrgIdQuery, withErrors } from '../../http/schemas.ts';
import { sourceCatalog, type SourceContext } from '../sources/index.ts';

const TAG = 'quick-search';

const SourceFreshness = Type.Object({
  id: Type.Integer({ description: "The catalog row's id (service_id)" }),
  name: Type.String(),
  alias: Type.String(),
  newest_record_at: Nullable(
    Type.String({
      format: 'date-time',
      description: 'When the newest record was stored (a message: posted); null while the source has none',
    }),
  ),
});

/** How fresh each source's data is (docs/api.md "Quick searches"): what a search can find today. */
export function sourceFreshnessRoutes(context: SourceContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/service/source_freshness/',
      {
        schema: {
          operationId: 'sourceFreshness',
          tags: [TAG],
          summary: "Each catalog source's newest stored record: how fresh its data is",
          querystring: Type.Object({ org_id: OrgIdQuery }),
          response: withErrors({ 200: Type.Array(SourceFreshness) }, [400, 401, 403, 404, 429]),
        },
      },
      async (request) => {
        requireAuth(request);
        return Promise.all(
          sourceCatalog.map(async (source) => {
            const newest = source.newestRecordAt ? await source.newestRecordAt(context) : null;
            return {
              id: source.id,
              name: source.name,
              alias: source.alias,
              newest_record_at: newest === null ? null : new Date(newest).toISOString(),
            };
          }),
        );
      },
    );
  };
}
