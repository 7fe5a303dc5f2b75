import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireAuth } from '../../http/auth.plugin.ts';
import { clientSignal } from '../../http/client-gone.ts';
import { withErrors } from '../../http/schemas.ts';
import type { ChannelRepository } from './channel.repository.ts';
import { channelRoutes } from './channel.routes.ts';
import { contentTypes, exportRowLimit, renderExport } from './search-export.ts';
import { SEARCH_LIMITS } from './search-limits.ts';
import { ExportQuery, HistoryList, HistoryParams, Paging, SearchBody, SearchResponse } from './search.schemas.ts';
import type { SearchService } from './search.service.ts';

/** The messenger search API: searches, the channels they run over, and the history of past searches. */
export function searchRoutes(deps: { search: SearchService; channels: ChannelRepository }): FastifyPluginAsyncTypebox {
  const { search, channels } = deps;
  return async (app) => {
    app.post(
      '/service/messenger-search-create/',
      {
        schema: {
          operationId: 'messengerSearchCreate',
          tags: ['messenger search'],
          summary: 'Search messenger channels; the search is recorded in history',
          body: SearchBody,
          response: withErrors({ 200: SearchResponse }, [400, 401, 429]),
        },
        // A search only reads (its history entry is a record of the read): an API key of scope read may run it.
        config: { rateLimit: { service: 'messenger-search-create', name: 'Messenger search' }, readOnly: true },
      },
      (request, reply) => {
        const auth = requireAuth(request);
        return search.search({ orgId: auth.orgId, userId: auth.user.id }, request.body, clientSignal(reply));
      },
    );

    await app.register(channelRoutes(channels));

    app.get(
      '/service/messenger-search-history/',
      {
        schema: {
          operationId: 'messengerSearchHistory',
          tags: ['messenger search'],
          summary: "The organization's past searches, newest first",
          querystring: Type.Object(Paging(20, SEARCH_LIMITS.maxPageSize)),
          response: withErrors({ 200: HistoryList }, [400, 401, 429]),
        },
        config: { rateLimit: { service: 'messenger-search-history', name: 'Messenger search history' } },
      },
      (request) => {
        const auth = requireAuth(request);
        return search.listHistory(
          { orgId: auth.orgId, userId: auth.user.id },
          request.query.page,
          request.query.page_size,
        );
      },
    );

    app.delete(
      '/service/messenger-search-history/:history_id/',
      {
        schema: {
          operationId: 'messengerSearchHistoryDelete',
          tags: ['messenger search'],
          summary:
            "Delete one of your own past searches (docs/api.md: an addition to the spec); another user's is not found",
          params: HistoryParams,
          response: withErrors({ 204: Type.Null({ description: 'Deleted' }) }, [400, 401, 404, 429]),
        },
        config: { rateLimit: { service: 'messenger-search-history', name: 'Messenger search history' } },
      },
      async (request, reply) => {
        const auth = requireAuth(request);
        await search.deleteHistory({ orgId: auth.orgId, userId: auth.user.id }, request.params.history_id);
        return reply.code(204).send(null);
      },
    );

    app.get(
      '/service/messenger-search-history-results/:history_id/',
      {
        schema: {
          operationId: 'messengerSearchHistoryResults',
          tags: ['messenger search'],
          summary: 'Re-read the results of a past search, as they were when it ran',
          params: HistoryParams,
          querystring: Type.Object(Paging(10, SEARCH_LIMITS.maxPageSize)),
          response: withErrors({ 200: SearchResponse }, [400, 401, 404, 429]),
        },
        config: { rateLimit: { service: 'messenger-search-history', name: 'Messenger search history' } },
      },
      (request, reply) =>
        search.readPage(
          requireAuth(request).orgId,
          request.params.history_id,
          request.query.page,
          request.query.page_size,
          clientSignal(reply),
        ),
    );

    app.get(
      '/service/messenger-search-history-export/:history_id/',
      {
        schema: {
          operationId: 'messengerSearchHistoryExport',
          tags: ['messenger search'],
          summary: 'Download a past search as CSV, JSON, XML or PDF',
          params: HistoryParams,
          querystring: ExportQuery,
          response: withErrors(
            { 200: Type.Unknown({ description: 'The file (csv, json, xml or pdf)' }) },
            [400, 401, 404, 429],
          ),
        },
        config: { rateLimit: { service: 'messenger-search-history', name: 'Messenger search history' } },
      },
      async (request, reply) => {
        const { format } = request.query;
        const input = await search.exportRows(
          requireAuth(request).orgId,
          request.params.history_id,
          exportRowLimit(format),
          clientSignal(reply),
        );
        const body = renderExport(format, input);
        return reply
          .header('content-type', contentTypes[format])
          .header('content-disposition', `attachment; filename="dragnet-search-${input.history.id}.${format}"`)
          .send(body);
      },
    );
  };
}
