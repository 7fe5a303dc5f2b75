import { Type } from '@sinclair/typebox';
import { IdInteger, MAX_PAGE, Nullable } from '../../http/schemas.ts';
import { frequencies } from '../../lib/frequency.ts';
import { TLP_LEVELS } from '../cti/index.ts';

export const RuleBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    service: Type.Optional(IdInteger({ description: 'Catalog service id (optional with follow_up_token: messenger)' })),
    args: Type.Optional(Type.Unknown({ description: "Must satisfy the service's args_schema" })),
    sender: Type.Optional(Nullable(IdInteger())),
    email_template: IdInteger(),
    recipients: Type.Optional(Type.Array(IdInteger(), { maxItems: 10 })),
    webhook: Type.Optional(Nullable(IdInteger())),
    siem_targets: Type.Optional(
      Type.Array(IdInteger(), {
        maxItems: 10,
        description: 'Splunk HEC and syslog targets the hits also go to (docs/siem.md); in addition to rule 5',
      }),
    ),
    frequency: Type.Optional(Type.Union(frequencies.map((f) => Type.Literal(f)))),
    tlp: Type.Optional(
      Type.Union(
        TLP_LEVELS.map((level) => Type.Literal(level)),
        {
          description:
            "TLP 2.0 marking of the rule's findings in STIX/MISP exports (default amber; kept when omitted on update)",
        },
      ),
    ),
    follow_up_token: Type.Optional(
      Type.String({ maxLength: 8192, description: 'Start a messenger rule from a search' }),
    ),
  },
  { additionalProperties: false },
);

export const Rule = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  service: Type.Integer(),
  args: Type.Record(Type.String(), Type.Unknown()),
  sender: Nullable(Type.Integer()),
  email_template: Nullable(Type.Integer()),
  recipients: Type.Array(Type.Integer()),
  webhook: Nullable(Type.Integer()),
  siem_targets: Type.Array(Type.Integer()),
  frequency: Type.String(),
  tlp: Type.String({
    description: 'TLP 2.0 marking of the findings in exports: clear, green, amber, amber+strict, red',
  }),
  total_alerts_count: Type.Integer(),
  total_matches_count: Type.Integer(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  last_run: Nullable(Type.String({ format: 'date-time' })),
  is_deleted: Type.Boolean(),
  deleted_at: Nullable(Type.String({ format: 'date-time' })),
  deleted_by: Nullable(Type.Integer()),
  deletion_snapshot: Nullable(Type.Record(Type.String(), Type.Unknown())),
});

export const RuleListQuery = Type.Object({
  page: Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 }),
  page_size: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  recipient_id: Type.Optional(IdInteger()),
  sender_id: Type.Optional(IdInteger()),
  email_template_id: Type.Optional(IdInteger()),
  webhook_id: Type.Optional(IdInteger()),
  include_deleted: Type.Boolean({ default: false }),
});

export const CatalogRow = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  alias: Type.String(),
  args_schema: Type.Object({
    params: Type.Array(
      Type.Object({
        name: Type.String(),
        type: Type.String(),
        required: Type.Boolean(),
        hint: Type.Optional(Type.String()),
        example: Type.Optional(Type.Unknown()),
        valid_values: Type.Optional(Type.Array(Type.Union([Type.String(), Type.Number()]))),
      }),
    ),
  }),
  service_type: Type.String(),
  excludable_fields: Type.Array(Type.String()),
  filterable_fields: Type.Array(Type.String()),
  sortable_fields: Type.Array(Type.String()),
  frequency: Type.String(),
  has_data: Type.Boolean({
    description: 'Whether Dragnet ingests data for this source: false means its rules run but never match yet',
  }),
});

/** One run's match (docs/api.md "Matches and exclusions"). */
export const Match = Type.Object({
  id: Type.Integer(),
  rule_id: Type.Integer(),
  status: Type.String({ description: 'pending (async source still working), complete' }),
  total_hits: Type.Integer({ description: 'All hits of the run' }),
  stored_hits: Type.Integer({ description: 'Hits kept (at most 10,000)' }),
  excluded_hits: Type.Integer(),
  new_hits: Type.Integer({ description: 'Stored hits that are not excluded' }),
  window_start: Nullable(Type.String({ format: 'date-time' })),
  window_end: Type.String({ format: 'date-time' }),
  created_at: Type.String({ format: 'date-time' }),
  completed_at: Nullable(Type.String({ format: 'date-time' })),
  progress: Type.Optional(
    Type.Object(
      { done: Type.Number(), total: Type.Number(), unit: Type.String() },
      {
        description:
          "An async source's work on this match so far (e.g. bytes of raw leak files scanned); absent until it reports",
      },
    ),
  ),
});
