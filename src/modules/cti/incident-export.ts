import { csvRows } from '../../lib/csv.ts';
import type { ExportedHit } from './exported-hits.ts';
import type { createStixMapper } from './stix/stix-mapper.ts';

export const INCIDENT_EXPORT_FORMATS = ['csv', 'json', 'stix'] as const;
export type IncidentExportFormat = (typeof INCIDENT_EXPORT_FORMATS)[number];

export const incidentExportTypes: Record<IncidentExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  json: 'application/json; charset=utf-8',
  // STIX 2.1 section 1.5 / TAXII 2.1: the media type of STIX content.
  stix: 'application/stix+json;version=2.1',
};

export const incidentExportFile = (incidentId: number, format: IncidentExportFormat) =>
  `dragnet-incident-${incidentId}.${format === 'stix' ? 'stix.json' : format}`;

/** A hit as the hits endpoint shows it (alert_system_match_get_match_hits): masked, with its key. */
const hitRow = (hit: ExportedHit) => ({
  id: hit.id,
  is_excluded: false,
  ...hit.data,
  hit_key: hit.key,
});

const cell = (value: unknown): string =>
  value === null || value === undefined
    ? ''
    : typeof value === 'object'
      ? Array.isArray(value) && value.every((item) => typeof item !== 'object')
        ? value.join('; ')
        : JSON.stringify(value)
      : String(value);

function incidentCsv(hits: ExportedHit[]): string {
  const rows = hits.map(hitRow);
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  return csvRows([
    columns,
    ...rows.map((row) => columns.map((column) => cell((row as Record<string, unknown>)[column]))),
  ]);
}

/**
 * An incident's hits as a file (docs/api.md "Incident exports"): CSV and JSON as the hits
 * endpoint presents them, or a STIX 2.1 bundle of every hit's objects and the shared ones.
 */
export function renderIncidentExport(
  stix: ReturnType<typeof createStixMapper>,
  input: { incidentId: number; format: IncidentExportFormat; hits: ExportedHit[] },
): string {
  const { hits, incidentId } = input;
  if (input.format === 'csv') return incidentCsv(hits);
  if (input.format === 'json') {
    const first = hits[0];
    return JSON.stringify({
      incident_id: incidentId,
      rule_id: first?.ruleId ?? null,
      rule_name: first?.ruleName ?? null,
      service: first?.sourceId ?? null,
      tlp: first?.tlp ?? null,
      count: hits.length,
      hits: hits.map(hitRow),
    });
  }
  // Hits share observables (one domain in many leaked logins): a bundle holds each object once.
  const objects = new Map(stix.sharedObjects().map((object) => [object.id, object]));
  for (const hit of hits) for (const object of stix.objectsOfHit(hit)) objects.set(object.id, object);
  return JSON.stringify(stix.bundle([...objects.values()]));
}
