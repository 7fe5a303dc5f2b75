import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../../db/schema.ts';
import { notFound } from '../../../lib/errors.ts';
import { exportedHit, selectExportedHits, TLP_LEVELS, type ExportedHit, type Tlp } from '../exported-hits.ts';
import type { StixObject } from '../stix/stix-mapper.ts';
import {
  createAttributeCollector,
  eventHead,
  eventUuid,
  hashedValues,
  mispEvent,
  type IncidentRow,
  type MispEvent,
} from './misp-event.ts';

/** Incidents read per query when the feed walks an organization (manifest, hashes, uuid lookup). */
const INCIDENT_PAGE = 500;
/** Hits read per query when hashes.csv walks a page of incidents. */
const HIT_PAGE = 2000;
/** Event uuids remembered for the feed's <uuid>.json (about 100 bytes each). */
const KNOWN_EVENTS_MAX = 200_000;

const md5Hex = (value: string) => createHash('md5').update(value, 'utf8').digest('hex');

/** An incident with what its event head needs: its rule, marking and organization. */
function selectIncidents(db: Kysely<Database>) {
  return db
    .selectFrom('matches')
    .innerJoin('alert_rules', 'alert_rules.id', 'matches.rule_id')
    .innerJoin('organizations', 'organizations.id', 'matches.org_id')
    .select([
      'matches.id',
      'matches.org_id',
      'organizations.name as org_name',
      'alert_rules.name as rule_name',
      'alert_rules.service_id',
      'alert_rules.tlp',
      'matches.incident_status',
      'matches.created_at',
      'matches.completed_at',
      'matches.status_changed_at',
    ]);
}

type IncidentQueryRow = Awaited<ReturnType<ReturnType<typeof selectIncidents>['executeTakeFirstOrThrow']>>;
const incidentRow = (row: IncidentQueryRow): IncidentRow => ({
  orgId: Number(row.org_id),
  orgName: row.org_name,
  incidentId: Number(row.id),
  ruleName: row.rule_name,
  sourceId: Number(row.service_id),
  tlp: (TLP_LEVELS as readonly string[]).includes(row.tlp) ? (row.tlp as Tlp) : 'amber',
  status: row.incident_status,
  createdAt: Number(row.created_at),
  changedAt: Math.max(Number(row.completed_at ?? 0), Number(row.status_changed_at ?? 0)),
});

/** The event hashes.csv is writing: values of two of its attributes (a domain, a text naming it) hash once. */
interface HashedEvent {
  incidentId: number;
  uuid: string;
  collector: ReturnType<typeof createAttributeCollector>;
  hashed: Set<string>;
}

/**
 * MISP events of an organization's incidents (docs/misp.md): one incident as an event, and the
 * MISP feed (manifest.json, hashes.csv, <event uuid>.json) of every incident that has at least
 * one hit not excluded. The feed is written as it is read, a page of incidents at a time, so a
 * big organization's feed never sits in memory whole.
 */
export function createMispFeed(deps: { db: Kysely<Database>; objectsOfHit: (hit: ExportedHit) => StixObject[] }) {
  const { db } = deps;
  // Event uuid → incident id, as the feed's walks met them: MISP reads manifest.json, then the
  // events it lists, and a uuid cannot be turned back into its incident (a UUIDv5 is a hash).
  // Only a shortcut: the incident is read again scoped to the organization; unknown uuids are looked
  // for by a walk of the organization's incidents.
  const knownEvents = new Map<string, number>();

  /**
   * The organization's incidents with a hit not excluded, in id order, a page at a time. Their ids
   * are read first (a few bytes an incident, from the index on org_id): paging by `id > last` would
   * sort all the organization's incidents again for every page.
   */
  async function* incidentPages(orgId: number): AsyncGenerator<IncidentRow[]> {
    const ids = (await db.selectFrom('matches').select('id').where('org_id', '=', orgId).execute())
      .map((row) => Number(row.id))
      .sort((a, b) => a - b);
    for (let i = 0; i < ids.length; i += INCIDENT_PAGE) {
      const page = await incidentsWithHits(orgId, ids.slice(i, i + INCIDENT_PAGE));
      if (page.length > 0) yield page;
    }
  }

  /** Those of these incidents of the organization that have a hit not excluded, in id order. */
  async function incidentsWithHits(orgId: number, ids: number[]): Promise<IncidentRow[]> {
    const rows = await selectIncidents(db)
      .where('matches.org_id', '=', orgId)
      .where('matches.id', 'in', ids)
      .where(({ exists, selectFrom }) =>
        exists(
          selectFrom('match_hits')
            .select('match_hits.id')
            .whereRef('match_hits.match_id', '=', 'matches.id')
            .where('match_hits.is_excluded', '=', 0),
        ),
      )
      .orderBy('matches.id')
      .execute();
    const page = rows.map(incidentRow);
    if (knownEvents.size + page.length > KNOWN_EVENTS_MAX) knownEvents.clear();
    for (const incident of page) knownEvents.set(eventUuid(orgId, incident.incidentId), incident.incidentId);
    return page;
  }

  /** The hits (not excluded) of some incidents, by incident then storage order, a page per query. */
  async function* hitsOf(incidentIds: number[]): AsyncGenerator<ExportedHit> {
    let after: { incidentId: number; id: number } | null = null;
    for (;;) {
      let query = selectExportedHits(db)
        .where('match_hits.match_id', 'in', incidentIds)
        .where('match_hits.is_excluded', '=', 0);
      if (after) {
        const { incidentId, id } = after;
        query = query.where((eb) =>
          eb.or([
            eb('match_hits.match_id', '>', incidentId),
            eb.and([eb('match_hits.match_id', '=', incidentId), eb('match_hits.id', '>', id)]),
          ]),
        );
      }
      const rows = await query.orderBy('match_hits.match_id').orderBy('match_hits.id').limit(HIT_PAGE).execute();
      for (const row of rows) yield exportedHit(row);
      if (rows.length < HIT_PAGE) return;
      const last = rows.at(-1)!;
      after = { incidentId: Number(last.match_id), id: Number(last.id) };
    }
  }

  async function incidentOf(orgId: number, incidentId: number): Promise<IncidentRow> {
    const row = await selectIncidents(db)
      .where('matches.org_id', '=', orgId)
      .where('matches.id', '=', incidentId)
      .executeTakeFirst();
    if (!row) throw notFound('incident');
    return incidentRow(row);
  }

  async function eventOf(incident: IncidentRow): Promise<{ Event: MispEvent }> {
    const head = eventHead(incident);
    const collector = createAttributeCollector(head.uuid, deps.objectsOfHit);
    for await (const hit of hitsOf([incident.incidentId])) collector.add(hit);
    return mispEvent(head, collector.attributes());
  }

  return {
    /** One incident as a MISP event (its hits not excluded as attributes); 404 for another org's incident. */
    event: async (orgId: number, incidentId: number) => eventOf(await incidentOf(orgId, incidentId)),

    /** The feed's <uuid>.json: the event of the organization's incident with that uuid; 404 when there is none. */
    async eventByUuid(orgId: number, uuid: string) {
      const known = knownEvents.get(uuid);
      if (known !== undefined) {
        const [incident] = await incidentsWithHits(orgId, [known]);
        if (incident) return eventOf(incident);
      }
      for await (const page of incidentPages(orgId)) {
        const incident = page.find((row) => eventUuid(orgId, row.incidentId) === uuid);
        if (incident) return eventOf(incident);
      }
      throw notFound('event');
    },

    /** manifest.json, in pieces: event uuid → the event's head. */
    async *manifest(orgId: number): AsyncGenerator<string> {
      let separator = '';
      yield '{';
      for await (const page of incidentPages(orgId)) {
        // One chunk a page: a chunk an event costs the stream more than writing the JSON.
        const entries = page.map((incident) => {
          const { uuid, ...head } = eventHead(incident);
          return `\n${JSON.stringify(uuid)}:${JSON.stringify(head)}`;
        });
        yield separator + entries.join(',');
        separator = ',';
      }
      yield '\n}\n';
    },

    /** hashes.csv, in pieces: `<md5 of an attribute value>,<event uuid>` per line, as MISP's feed generator writes it. */
    async *hashes(orgId: number): AsyncGenerator<string> {
      for await (const page of incidentPages(orgId)) {
        let current = null as HashedEvent | null;
        let lines: string[] = [];
        for await (const hit of hitsOf(page.map((incident) => incident.incidentId))) {
          if (current?.incidentId !== hit.incidentId) {
            const uuid = eventUuid(orgId, hit.incidentId);
            current = {
              incidentId: hit.incidentId,
              uuid,
              collector: createAttributeCollector(uuid, deps.objectsOfHit),
              hashed: new Set(),
            };
          }
          for (const attribute of current.collector.add(hit))
            for (const value of hashedValues(attribute)) {
              if (current.hashed.has(value)) continue;
              current.hashed.add(value);
              lines.push(`${md5Hex(value)},${current.uuid}\n`);
            }
          if (lines.length >= 1000) {
            yield lines.join('');
            lines = [];
          }
        }
        if (lines.length > 0) yield lines.join('');
      }
    },
  };
}

export type MispFeed = ReturnType<typeof createMispFeed>;
