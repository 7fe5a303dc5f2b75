import { Type } from '@sinclair/typebox';
import { IdInteger, LinkedPage, MAX_PAGE, Nullable, OrgIdQuery } from '../../http/schemas.ts';
import { incidentStatuses } from './incident.repository.ts';

const IncidentStatus = Type.Union(
  incidentStatuses.map((status) => Type.Literal(status)),
  { description: incidentStatuses.join(', ') },
);

const UserRef = Type.Object({ id: Type.Integer(), email: Type.String() });

export const Incident = Type.Object({
  id: Type.Integer({ description: 'The match id: the incident link is /incidents/<id>' }),
  rule_id: Type.Integer(),
  rule_name: Type.String(),
  source: Nullable(Type.String({ description: "The rule's source: the catalog row's name (e.g. messenger)" })),
  source_alias: Nullable(Type.String({ description: "The source's human-readable label (the catalog's alias)" })),
  status: Type.String({ description: "The match's own status: pending (async source still working), complete" }),
  incident_status: IncidentStatus,
  assignee: Nullable(UserRef),
  status_changed_at: Nullable(Type.String({ format: 'date-time' })),
  status_changed_by: Nullable(Type.Integer({ description: 'The user who last changed the status' })),
  total_hits: Type.Integer(),
  stored_hits: Type.Integer(),
  excluded_hits: Type.Integer(),
  new_hits: Type.Integer({ description: 'Stored hits that are not excluded' }),
  notes_count: Type.Integer(),
  window_start: Nullable(Type.String({ format: 'date-time' })),
  window_end: Type.String({ format: 'date-time' }),
  created_at: Type.String({ format: 'date-time' }),
  completed_at: Nullable(Type.String({ format: 'date-time' })),
});

export const IncidentListQuery = Type.Object({
  page: Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 }),
  page_size: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  status: Type.Optional(Type.Array(IncidentStatus, { maxItems: 4, description: 'Repeatable: any of these' })),
  rule_id: Type.Optional(IdInteger()),
  source: Type.Optional(Type.String({ maxLength: 100, description: "A source's catalog name, e.g. messenger" })),
  assignee_id: Type.Optional(IdInteger()),
  unassigned: Type.Optional(Type.Boolean({ description: 'true: only incidents nobody is assigned to' })),
  created_after: Type.Optional(Type.String({ format: 'date-time', description: 'Created at or after' })),
  created_before: Type.Optional(Type.String({ format: 'date-time', description: 'Created before' })),
  org_id: OrgIdQuery,
});

export const IncidentPage = LinkedPage(Incident);

export const IncidentCounts = Type.Object(
  Object.fromEntries(incidentStatuses.map((status) => [status, Type.Integer()])) as Record<
    (typeof incidentStatuses)[number],
    ReturnType<typeof Type.Integer>
  >,
);

export const IncidentUpdateBody = Type.Object(
  {
    status: Type.Optional(IncidentStatus),
    assignee_id: Type.Optional(
      Nullable(IdInteger({ description: 'An active user of the organization; null unassigns' })),
    ),
    note: Type.Optional(Type.String({ minLength: 1, maxLength: 5000 })),
    exclude_hits: Type.Optional(
      Type.Boolean({
        description:
          'With status false_positive: exclude every counted hit of the incident by hit_key, in the same transaction',
      }),
    ),
  },
  { additionalProperties: false },
);

export const IncidentBulkBody = Type.Object(
  {
    ids: Type.Array(IdInteger(), { minItems: 1, maxItems: 500 }),
    status: IncidentStatus,
  },
  { additionalProperties: false },
);

export const IncidentBulkResult = Type.Object({
  updated: Type.Integer({ description: 'How many changed status (those already in it are left as they were)' }),
  ids: Type.Array(Type.Integer()),
});

export const IncidentEvent = Type.Object({
  id: Type.Integer(),
  kind: Type.String({ description: 'status, assignee or note' }),
  from: Nullable(Type.String({ description: 'The status or the assignee email before' })),
  to: Nullable(Type.String({ description: 'The status or the assignee email after' })),
  note: Nullable(Type.String()),
  user: Nullable(UserRef),
  created_at: Type.String({ format: 'date-time' }),
});

export const Assignee = UserRef;

export const MatchStatsQuery = Type.Object({
  days: Type.Integer({ minimum: 1, maximum: 90, default: 30, description: 'UTC days, today included' }),
  org_id: OrgIdQuery,
});

export const MatchStats = Type.Object({
  days: Type.Integer(),
  from: Type.String({ format: 'date-time', description: 'The start of the first day (UTC)' }),
  by_day: Type.Array(
    Type.Object({
      day: Type.String({ format: 'date', description: 'A UTC day, oldest first; days without matches are 0' }),
      matches: Type.Integer(),
      new_hits: Type.Integer({ description: 'Stored hits that are not excluded' }),
    }),
  ),
  busiest_rules: Type.Array(
    Type.Object({
      rule_id: Type.Integer(),
      rule_name: Type.String(),
      source: Nullable(Type.String()),
      matches: Type.Integer(),
      new_hits: Type.Integer(),
    }),
    { description: 'The 5 rules with the most new hits in the period (deleted rules too)' },
  ),
});
