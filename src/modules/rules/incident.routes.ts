import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { requireAuth } from '../../http/auth.plugin.ts';
import { IdInteger, withErrors } from '../../http/schemas.ts';
import { requestOrigin } from '../audit/index.ts';
import {
  Assignee,
  Incident,
  IncidentBulkBody,
  IncidentBulkResult,
  IncidentCounts,
  IncidentEvent,
  IncidentListQuery,
  IncidentPage,
  IncidentUpdateBody,
  MatchStats,
  MatchStatsQuery,
} from './incident.schemas.ts';
import { INCIDENT_LIST_PATH, type IncidentActor, type IncidentService } from './incident.service.ts';

const TAG = 'incidents';
const IdParams = Type.Object({ id: IdInteger({ description: 'The match id' }) });

/** The request's user as the actor of an incident change, in the organization the request acts for. */
const actorOf = (request: FastifyRequest): IncidentActor => {
  const origin = requestOrigin(request);
  return { ...origin, actor: origin.actor! };
};

/** The incident inbox (docs/api.md "Incidents"): additions to the spec, which names matches only. */
export function incidentRoutes(incidents: IncidentService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      INCIDENT_LIST_PATH,
      {
        schema: {
          operationId: 'listIncidents',
          tags: [TAG],
          summary: "The organization's incidents (matches) across all rules, newest first, with filters",
          querystring: IncidentListQuery,
          response: withErrors({ 200: IncidentPage }, [400, 401, 403, 404, 429]),
        },
      },
      (request) => incidents.list(requireAuth(request).orgId, request.query),
    );

    app.get(
      '/service/alert_system_incident_counts/',
      {
        schema: {
          operationId: 'countIncidents',
          tags: [TAG],
          summary: "How many of the organization's incidents are in each status",
          response: withErrors({ 200: IncidentCounts }, [401, 403, 404, 429]),
        },
      },
      (request) => incidents.counts(requireAuth(request).orgId),
    );

    app.get(
      '/service/alert_system_match_stats/',
      {
        schema: {
          operationId: 'matchStats',
          tags: [TAG],
          summary: "Matches and new hits per UTC day across the organization's rules, and the busiest rules",
          querystring: MatchStatsQuery,
          response: withErrors({ 200: MatchStats }, [400, 401, 403, 404, 429]),
        },
      },
      (request) => incidents.stats(requireAuth(request).orgId, request.query.days),
    );

    app.get(
      '/service/alert_system_incident_get/:id/',
      {
        schema: {
          operationId: 'getIncident',
          tags: [TAG],
          summary: 'One incident: the match with its status, assignee and rule',
          params: IdParams,
          response: withErrors({ 200: Incident }, [400, 401, 404, 429]),
        },
      },
      (request) => incidents.get(requireAuth(request).orgId, request.params.id),
    );

    app.post(
      '/service/alert_system_incident_update/:id/',
      {
        schema: {
          operationId: 'updateIncident',
          tags: [TAG],
          summary: 'Change the status or the assignee of an incident, or add a note (any of the three)',
          params: IdParams,
          body: IncidentUpdateBody,
          response: withErrors({ 200: Incident }, [400, 401, 404, 409, 429]),
        },
      },
      (request) => incidents.update(actorOf(request), request.params.id, request.body),
    );

    app.post(
      '/service/alert_system_incident_bulk_update/',
      {
        schema: {
          operationId: 'bulkUpdateIncidents',
          tags: [TAG],
          summary: 'One status for up to 500 incidents: all of them change, or none (404 if one is not found)',
          body: IncidentBulkBody,
          response: withErrors({ 200: IncidentBulkResult }, [400, 401, 404, 429]),
        },
      },
      (request) => incidents.bulkUpdate(actorOf(request), request.body),
    );

    app.get(
      '/service/alert_system_incident_events/:id/',
      {
        schema: {
          operationId: 'listIncidentEvents',
          tags: [TAG],
          summary: "An incident's history, oldest first: status and assignee changes and notes, who and when",
          params: IdParams,
          response: withErrors({ 200: Type.Array(IncidentEvent) }, [400, 401, 404, 429]),
        },
      },
      (request) => incidents.events(requireAuth(request).orgId, request.params.id),
    );

    app.get(
      '/service/alert_system_incident_assignees/',
      {
        schema: {
          operationId: 'listIncidentAssignees',
          tags: [TAG],
          summary: 'The active users of the organization: who an incident can be assigned to',
          response: withErrors({ 200: Type.Array(Assignee) }, [401, 403, 404, 429]),
        },
      },
      (request) => incidents.assignees(requireAuth(request).orgId),
    );
  };
}
