import { Type } from '@sinclair/typebox';
import { LinkedPage, MAX_PAGE, Nullable, OrgIdQuery } from '../../http/schemas.ts';

/** Every event the log records (docs/api.md "Audit log"); names never change once released. */
export const auditEvents = [
  'login.succeeded',
  'login.failed',
  'token.refresh_refused',
  'two_factor.enabled',
  'two_factor.disabled',
  'two_factor.verification_failed',
  'two_factor.backup_code_used',
  'two_factor.backup_codes_regenerated',
  'password.changed',
  'password.change_failed',
  'user.created',
  'user.disabled',
  'user.enabled',
  'sender.created',
  'sender.deleted',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'siem_target.created',
  'siem_target.updated',
  'siem_target.deleted',
  'rule.deleted',
  'rule.restored',
  'incident.status_changed',
  'incident.assigned',
  'incident.note_added',
  'hit.revealed',
  'rule.paused',
  'rule.resumed',
  'api_key.created',
  'api_key.revoked',
  'api_key.used',
] as const;

export type AuditEventName = (typeof auditEvents)[number];

export const AuditEntry = Type.Object({
  id: Type.Integer(),
  event: Type.String({ description: `One of: ${auditEvents.join(', ')}` }),
  created_at: Type.String({ format: 'date-time' }),
  actor_user_id: Nullable(Type.Integer(), {
    description: 'The user who did it; null for an operator command or a failed login',
  }),
  actor_email: Nullable(Type.String()),
  target_type: Type.String({ description: 'user, sender, webhook, siem_target, rule, incident or api_key' }),
  target_id: Type.Integer(),
  target_name: Nullable(
    Type.String({
      description:
        "The user's email, the sender's address, the webhook's or the rule's name (an incident's rule), as it was then",
    }),
  ),
  via: Type.String({ description: "api (an HTTP request) or cli (an operator's dragnet command)" }),
  ip_address: Nullable(Type.String({ description: 'The client address of an api event' })),
  details: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]), {
    description:
      'A few facts about the event, never a secret: reason of a failed login or check, server host of a sender, host of a webhook',
  }),
});

export const AuditLogQuery = Type.Object({
  page: Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 }),
  page_size: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  event: Type.Optional(
    Type.Union(
      auditEvents.map((name) => Type.Literal(name)),
      { description: 'Only this event' },
    ),
  ),
  org_id: OrgIdQuery,
});

export const AuditLogPage = LinkedPage(AuditEntry);
