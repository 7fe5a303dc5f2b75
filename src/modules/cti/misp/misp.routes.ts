import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireAuth } from '../../../http/auth.plugin.ts';
import { IdInteger, withErrors } from '../../../http/schemas.ts';
import type { MispFeed } from './misp-feed.ts';
import { FeedEventParams, MispEventBody } from './misp.schemas.ts';

const TAG = 'misp';
/** The MISP feed of the organization a request acts for (docs/misp.md "Feed"): MISP appends the file names. */
export const MISP_FEED_PREFIX = '/misp/feed';

// The feed answers with an API key as Bearer (MISP's feed "headers" setting) or as Basic password.
// Its three files count against one usage service: a fetch reads the manifest, then each event.
const feedConfig = {
  requiresAuth: true,
  basicAuth: true,
  rateLimit: { service: 'misp_feed', name: 'MISP feed' },
} as const;
// The feed is the organization's own data: never kept by a shared cache; MISP itself compares the
// manifest's timestamps to fetch only the events that changed.
const NO_SHARED_CACHE = 'private, no-cache';

export function mispRoutes(feed: MispFeed): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/service/alert_system_incident_misp_event/:id/',
      {
        schema: {
          operationId: 'getIncidentMispEvent',
          tags: [TAG],
          summary: 'An incident as a MISP event: its hits (not excluded) as attributes, TLP and source tags',
          params: Type.Object({ id: IdInteger({ description: 'The incident (match) id' }) }),
          response: withErrors({ 200: MispEventBody }, [400, 401, 404, 429]),
        },
      },
      async (request, reply) => {
        const event = await feed.event(requireAuth(request).orgId, request.params.id);
        return reply
          .header('content-disposition', `attachment; filename="misp-event-${event.Event.uuid}.json"`)
          .send(event);
      },
    );

    app.get(
      `${MISP_FEED_PREFIX}/manifest.json`,
      {
        schema: {
          operationId: 'mispFeedManifest',
          tags: [TAG],
          summary: "The MISP feed's manifest: event uuid → Orgc, Tag, info, date, analysis, threat_level_id, timestamp",
          response: withErrors({ 200: Type.Unknown({ description: 'manifest.json' }) }, [400, 401, 404, 429]),
        },
        config: feedConfig,
      },
      (request, reply) =>
        reply
          .header('content-type', 'application/json; charset=utf-8')
          .header('cache-control', NO_SHARED_CACHE)
          .send(Readable.from(feed.manifest(requireAuth(request).orgId))),
    );

    app.get(
      `${MISP_FEED_PREFIX}/hashes.csv`,
      {
        schema: {
          operationId: 'mispFeedHashes',
          tags: [TAG],
          summary: "The MISP feed's hashes.csv: the md5 of each attribute value and its event uuid, a line each",
          response: withErrors({ 200: Type.Unknown({ description: 'hashes.csv' }) }, [400, 401, 404, 429]),
        },
        config: feedConfig,
      },
      (request, reply) =>
        reply
          .header('content-type', 'text/csv; charset=utf-8')
          .header('cache-control', NO_SHARED_CACHE)
          .send(Readable.from(feed.hashes(requireAuth(request).orgId))),
    );

    app.get(
      `${MISP_FEED_PREFIX}/:file`,
      {
        schema: {
          operationId: 'mispFeedEvent',
          tags: [TAG],
          summary: 'One event of the MISP feed, by the uuid manifest.json lists',
          params: FeedEventParams,
          response: withErrors({ 200: MispEventBody }, [400, 401, 404, 429]),
        },
        config: feedConfig,
      },
      async (request, reply) => {
        const uuid = request.params.file.slice(0, -'.json'.length);
        const event = await feed.eventByUuid(requireAuth(request).orgId, uuid);
        return reply.header('cache-control', NO_SHARED_CACHE).send(event);
      },
    );
  };
}
