import type { Insertable, Transaction } from 'kysely';
import type { Database, IncidentEventTable } from '../../db/schema.ts';
import { AppError, conflict, notFound, validationError } from '../../lib/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { isoDateOrNull as iso } from '../../lib/iso-date.ts';
import { linkedPage, pageWindow, type PageRequest } from '../../lib/pagination.ts';
import type { AuditLog, AuditOrigin } from '../audit/index.ts';
import { findSource, sourceCatalog } from '../sources/index.ts';
import type { IncidentFilters, IncidentRepository, IncidentRow, IncidentStatus } from './incident.repository.ts';
import { DAY_MS, incidentStatuses } from './incident.repository.ts';
import { matchView } from './match.service.ts';
import type { RuleRepository } from './rule.repository.ts';
import type { RunRepository } from './run.repository.ts';

export const INCIDENT_LIST_PATH = '/service/alert_system_incident_list/';

interface IncidentListQuery extends PageRequest {
  status?: IncidentStatus[];
  rule_id?: number;
  source?: string;
  assignee_id?: number;
  unassigned?: boolean;
  created_after?: string;
  created_before?: string;
  org_id?: number;
}

interface IncidentChange {
  status?: IncidentStatus;
  assignee_id?: number | null;
  note?: string;
  exclude_hits?: boolean;
}

/** Who changes an incident: the request's user, the organization it acts for, and its address for the audit log. */
export type IncidentActor = AuditOrigin & { actor: { id: number; email: string } };

const incidentView = (row: IncidentRow) => ({
  ...matchView({ ...row, rule_id: Number(row.rule_id) }),
  rule_name: row.rule_name,
  source: findSource(Number(row.service_id))?.name ?? null,
  source_alias: findSource(Number(row.service_id))?.alias ?? null,
  incident_status: row.incident_status as IncidentStatus,
  assignee: row.assignee_id === null ? null : { id: Number(row.assignee_id), email: row.assignee_email ?? '' },
  status_changed_at: iso(row.status_changed_at),
  status_changed_by: row.status_changed_by === null ? null : Number(row.status_changed_by),
  notes_count: Number(row.notes_count ?? 0),
});

function listFilters(query: IncidentListQuery): IncidentFilters {
  const instant = (field: 'created_after' | 'created_before') => {
    const raw = query[field];
    if (raw === undefined) return undefined;
    const at = Date.parse(raw);
    if (Number.isNaN(at)) throw validationError(field, 'must be an ISO 8601 date-time');
    return at;
  };
  let serviceId: number | undefined;
  if (query.source !== undefined) {
    serviceId = sourceCatalog.find((source) => source.name === query.source)?.id;
    if (serviceId === undefined) {
      throw validationError('source', `must be one of ${sourceCatalog.map((s) => s.name).join(', ')}`);
    }
  }
  if (query.unassigned && query.assignee_id !== undefined) {
    throw validationError('unassigned', 'give either assignee_id or unassigned=true, not both');
  }
  return {
    status: query.status,
    rule_id: query.rule_id,
    service_id: serviceId,
    assignee_id: query.assignee_id,
    unassigned: query.unassigned,
    created_after: instant('created_after'),
    created_before: instant('created_before'),
  };
}

interface IncidentServiceDeps {
  incidents: IncidentRepository;
  rules: RuleRepository;
  runs: RunRepository;
  audit: AuditLog;
  clock: Clock;
}

async function loadIncident(incidents: IncidentRepository, orgId: number, id: number, tx?: Transaction<Database>) {
  const row = await incidents.find(orgId, id, tx);
  if (!row) throw notFound('incident');
  return incidentView(row);
}

/** Changes to incidents: each change, its events and its audit entries are one transaction. */
function incidentCommands({ incidents, rules, runs, audit, clock }: IncidentServiceDeps) {
  /** Marks the match's counted hits excluded by hit_key under the rule's lock, as exclusion create does. */
  async function excludeHits(
    actor: IncidentActor,
    match: { id: number; rule_id: number },
    tx: Transaction<Database>,
  ): Promise<number> {
    const rule = await rules.lock(actor.orgId, Number(match.rule_id), tx);
    if (Number(rule.is_deleted) === 1) throw conflict('a deleted rule has no exclusions; restore it first');
    const keys = await incidents.countedHitKeys(match.id, tx);
    await incidents.excludeHitKeys({ orgId: actor.orgId, ruleId: rule.id, now: clock.now().getTime() }, keys, tx);
    await runs.recount(rule.id, tx);
    return keys.length;
  }

  async function update(actor: IncidentActor, id: number, change: IncidentChange) {
    if (change.exclude_hits && change.status !== 'false_positive') {
      throw validationError('exclude_hits', 'only with status false_positive');
    }
    if (change.status === undefined && change.assignee_id === undefined && change.note === undefined) {
      throw validationError('status', 'give status, assignee_id or note');
    }
    return incidents.transaction(async (tx) => {
      const [current] = await incidents.lock(actor.orgId, [id], tx);
      if (!current) throw notFound('incident');
      const now = clock.now().getTime();
      const event = { org_id: actor.orgId, match_id: id, user_id: actor.actor.id, created_at: now };
      const target = { type: 'incident' as const, id, name: current.rule_name };
      const events: Insertable<IncidentEventTable>[] = [];

      if (change.assignee_id !== undefined && change.assignee_id !== nullableId(current.assignee_id)) {
        const assignee =
          change.assignee_id === null ? null : await incidents.findAssignee(actor.orgId, change.assignee_id, tx);
        if (change.assignee_id !== null && !assignee) {
          throw validationError('assignee_id', 'must be an active user of the organization');
        }
        const from = await incidents.emailOf(nullableId(current.assignee_id), tx);
        await incidents.setAssignee(id, assignee?.id ?? null, tx);
        events.push({ ...event, kind: 'assignee', from_value: from, to_value: assignee?.email ?? null });
        await audit.record(
          { ...actor, event: 'incident.assigned', target, details: { from, to: assignee?.email ?? null } },
          tx,
        );
      }
      const excluded = change.exclude_hits ? await excludeHits(actor, current, tx) : undefined;
      if (change.status !== undefined && change.status !== current.incident_status) {
        await incidents.setStatus([id], { status: change.status, by: actor.actor.id, at: now }, tx);
        events.push({ ...event, kind: 'status', from_value: current.incident_status, to_value: change.status });
      }
      if (change.status !== undefined && (change.status !== current.incident_status || excluded !== undefined)) {
        await audit.record(
          {
            ...actor,
            event: 'incident.status_changed',
            target,
            details: {
              from: current.incident_status,
              to: change.status,
              ...(excluded === undefined ? {} : { excluded_hits: excluded }),
            },
          },
          tx,
        );
      }
      if (change.note !== undefined) {
        events.push({ ...event, kind: 'note', note: change.note });
        await audit.record(
          { ...actor, event: 'incident.note_added', target, details: { length: change.note.length } },
          tx,
        );
      }
      await incidents.addEvents(events, tx);
      return loadIncident(incidents, actor.orgId, id, tx);
    });
  }

  /** One status for many incidents: all of them the organization's, or none changes (404). */
  async function bulkUpdate(actor: IncidentActor, input: { ids: number[]; status: IncidentStatus }) {
    const ids = [...new Set(input.ids)];
    return incidents.transaction(async (tx) => {
      const rows = await incidents.lock(actor.orgId, ids, tx);
      if (rows.length !== ids.length) {
        const found = new Set(rows.map((row) => Number(row.id)));
        const missing = ids.filter((id) => !found.has(id));
        throw new AppError('not_found', `incidents not found: ${missing.join(', ')}`, {
          fields: [{ field: 'ids', message: `not found: ${missing.join(', ')}` }],
        });
      }
      const changed = rows.filter((row) => row.incident_status !== input.status);
      const now = clock.now().getTime();
      const changedIds = changed.map((row) => Number(row.id));
      await incidents.setStatus(changedIds, { status: input.status, by: actor.actor.id, at: now }, tx);
      await incidents.addEvents(
        changed.map((row) => ({
          org_id: actor.orgId,
          match_id: Number(row.id),
          user_id: actor.actor.id,
          kind: 'status',
          from_value: row.incident_status,
          to_value: input.status,
          created_at: now,
        })),
        tx,
      );
      for (const row of changed) {
        await audit.record(
          {
            ...actor,
            event: 'incident.status_changed',
            target: { type: 'incident', id: Number(row.id), name: row.rule_name },
            details: { from: row.incident_status, to: input.status, bulk: true },
          },
          tx,
        );
      }
      return { updated: changedIds.length, ids: changedIds };
    });
  }

  return { update, bulkUpdate };
}

/** The inbox, an incident, its history, and who it can be assigned to. */
function incidentQueries({ incidents, clock }: IncidentServiceDeps) {
  return {
    /** The home page's figures: matches and new hits per UTC day of the last `days`, and the busiest rules. */
    async stats(orgId: number, days: number) {
      const today = Math.floor(clock.now().getTime() / DAY_MS);
      const first = today - days + 1;
      const { byDay, byRule } = await incidents.matchStats(orgId, first * DAY_MS);
      const perDay = new Map(byDay.map((row) => [Number(row.day), row]));
      return {
        days,
        from: new Date(first * DAY_MS).toISOString(),
        by_day: Array.from({ length: days }, (_, i) => {
          const row = perDay.get(first + i);
          return {
            day: new Date((first + i) * DAY_MS).toISOString().slice(0, 10),
            matches: Number(row?.matches ?? 0),
            new_hits: Number(row?.new_hits ?? 0),
          };
        }),
        busiest_rules: byRule.map((row) => ({
          rule_id: Number(row.rule_id),
          rule_name: row.name,
          source: findSource(Number(row.service_id))?.name ?? null,
          matches: Number(row.matches),
          new_hits: Number(row.new_hits ?? 0),
        })),
      };
    },

    get: (orgId: number, id: number) => loadIncident(incidents, orgId, id),

    async list(orgId: number, query: IncidentListQuery) {
      const { total, rows } = await incidents.listPage(orgId, listFilters(query), pageWindow(query));
      // Every filter goes into next/previous; linkedPage sets their page and page_size.
      return linkedPage(INCIDENT_LIST_PATH, query, total, rows.map(incidentView), { ...query });
    },

    async counts(orgId: number) {
      const byStatus = await incidents.countByStatus(orgId);
      return Object.fromEntries(incidentStatuses.map((status) => [status, byStatus.get(status) ?? 0])) as Record<
        IncidentStatus,
        number
      >;
    },

    async events(orgId: number, id: number) {
      await loadIncident(incidents, orgId, id);
      return (await incidents.events(orgId, id)).map((row) => ({
        id: Number(row.id),
        kind: row.kind,
        from: row.from_value,
        to: row.to_value,
        note: row.note,
        user: row.user_id === null ? null : { id: Number(row.user_id), email: row.user_email ?? '' },
        created_at: iso(row.created_at)!,
      }));
    },

    assignees: async (orgId: number) =>
      (await incidents.assignees(orgId)).map((user) => ({ id: Number(user.id), email: user.email })),
  };
}

const nullableId = (id: number | null) => (id === null ? null : Number(id));

/**
 * Matches worked as incidents (docs/api.md "Incidents"): their status and assignee, notes, and
 * the history of all three.
 */
export function createIncidentService(deps: IncidentServiceDeps) {
  return { ...incidentQueries(deps), ...incidentCommands(deps) };
}

export type IncidentService = ReturnType<typeof createIncidentService>;
