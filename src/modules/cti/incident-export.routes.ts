import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireAuth } from '../../http/auth.plugin.ts';
import { IdInteger, withErrors } from '../../http/schemas.ts';
import type { createExportedHitReader } from './exported-hits.ts';
import {
  INCIDENT_EXPORT_FORMATS,
  incidentExportFile,
  incidentExportTypes,
  renderIncidentExport,
} from './incident-export.ts';
import type { createStixMapper } from './stix/stix-mapper.ts';

/** GET /service/alert_system_incident_export/{id}/?format=csv|json|stix (docs/api.md "Incident exports"). */
export function incidentExportRoutes(deps: {
  hits: ReturnType<typeof createExportedHitReader>;
  stix: ReturnType<typeof createStixMapper>;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/service/alert_system_incident_export/:id/',
      {
        schema: {
          operationId: 'exportIncident',
          tags: ['incidents'],
          summary: "An incident's hits as CSV or JSON (as the hits endpoint shows them) or a STIX 2.1 bundle",
          params: Type.Object({ id: IdInteger({ description: 'The match (incident) id' }) }),
          querystring: Type.Object({
            format: Type.Union(
              INCIDENT_EXPORT_FORMATS.map((format) => Type.Literal(format)),
              { default: 'json', description: 'csv, json or stix (a STIX 2.1 bundle, docs/stix.md)' },
            ),
          }),
          response: withErrors(
            { 200: Type.Unknown({ description: 'The file (csv, json or STIX 2.1 bundle)' }) },
            [400, 401, 404, 429],
          ),
        },
      },
      async (request, reply) => {
        const { format } = request.query;
        const incidentId = request.params.id;
        const hits = await deps.hits.ofIncident(requireAuth(request).orgId, incidentId);
        return (
          reply
            .header('content-type', incidentExportTypes[format])
            .header('content-disposition', `attachment; filename="${incidentExportFile(incidentId, format)}"`)
            // A Buffer: Fastify sends it with the content type exactly as set (no charset appended).
            .send(Buffer.from(renderIncidentExport(deps.stix, { incidentId, format, hits })))
        );
      },
    );
  };
}
