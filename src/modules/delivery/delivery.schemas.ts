import { Type, type TSchema } from '@sinclair/typebox';
import { IdInteger, MAX_PAGE, Nullable } from '../../http/schemas.ts';

const Id = Type.Integer();
const Timestamp = Type.String({ format: 'date-time' });

export const Recipient = Type.Object({
  id: Id,
  email: Type.String(),
  is_default: Type.Boolean(),
  created_at: Timestamp,
});
export const RecipientBody = Type.Object(
  { email: Type.String({ minLength: 3, maxLength: 254 }), is_default: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

export const Sender = Type.Object({
  id: Id,
  email: Type.String({ description: 'The from address' }),
  server_host: Type.String(),
  encryption_method: Type.Union([Type.Literal('SSL'), Type.Literal('TLS')]),
  authentication_required: Type.Boolean(),
  is_default: Type.Boolean(),
  is_system_created: Type.Boolean(),
  created_at: Timestamp,
});
export const SenderBody = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 254 }),
    server_host: Type.String({ minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9.:\\[\\]-]+$' }),
    port: Type.Integer({ minimum: 1, maximum: 65535, description: 'Write-only' }),
    username: Type.Optional(Nullable(Type.String({ maxLength: 512 }), { description: 'Write-only' })),
    password: Type.Optional(Nullable(Type.String({ maxLength: 1024 }), { description: 'Write-only' })),
    encryption_method: Type.Union([Type.Literal('SSL'), Type.Literal('TLS')], {
      description: 'TLS: STARTTLS before authenticating, refused if the server does not offer it; SSL: plaintext',
    }),
    authentication_required: Type.Optional(Type.Boolean({ default: true })),
    is_default: Type.Optional(Type.Boolean()),
    // Read-only fields a client may echo back are accepted and ignored.
    is_system_created: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const Template = Type.Object({
  id: Id,
  name: Type.String(),
  subject: Type.String(),
  body: Type.String({
    description: 'HTML with {current_date}, {alert_rule_name}, {number_of_hits}, {service}, {match_detail_link}',
  }),
  is_default: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const TemplateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    subject: Type.String({ minLength: 1, maxLength: 998 }),
    body: Type.String({ minLength: 1, maxLength: 200_000 }),
    is_default: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const Webhook = Type.Object({
  id: Id,
  name: Type.String(),
  url: Type.String(),
  headers: Type.Record(Type.String(), Type.String()),
  secret: Type.String({ description: 'Server-generated signing secret (whsec_…)' }),
  is_default: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const WebhookBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    url: Type.String({ minLength: 1, maxLength: 2048 }),
    headers: Type.Optional(
      Type.Record(Type.String({ maxLength: 256 }), Type.String({ maxLength: 4096 }), {
        maxProperties: 20,
        description:
          'Sent with every delivery, encrypted at rest. Values: printable ASCII only. Refused: hop-by-hop and framing headers (Host, Content-Length, Transfer-Encoding, Connection, Upgrade, Expect, Proxy-*, …) and the headers Dragnet sets',
      }),
    ),
    is_default: Type.Optional(Type.Boolean()),
    secret: Type.Optional(Type.Unknown({ description: 'Ignored: the server generates the secret' })),
  },
  { additionalProperties: false },
);

const SiemKind = Type.Union([Type.Literal('splunk_hec'), Type.Literal('syslog')]);
const SyslogFormat = Type.Union([Type.Literal('json'), Type.Literal('cef')]);

/** A Splunk HEC or syslog target (docs/siem.md): the HEC token is never returned. */
export const SiemTarget = Type.Object({
  id: Id,
  name: Type.String(),
  kind: SiemKind,
  url: Nullable(Type.String({ description: 'splunk_hec: the collector endpoint' })),
  has_token: Type.Boolean({ description: 'splunk_hec: whether a token is stored (it is write-only)' }),
  index: Nullable(Type.String()),
  sourcetype: Nullable(Type.String()),
  source: Nullable(Type.String()),
  host: Nullable(Type.String({ description: 'syslog: the receiver' })),
  port: Nullable(Type.Integer()),
  format: Nullable(SyslogFormat),
  app_name: Nullable(Type.String()),
  facility: Nullable(Type.Integer()),
  verify_tls: Type.Boolean(),
  ca_pem: Nullable(Type.String({ description: 'A CA certificate (PEM) trusted for this target' })),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export const SiemTargetBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    kind: SiemKind,
    url: Type.Optional(Nullable(Type.String({ maxLength: 2048, description: 'splunk_hec: required' }))),
    token: Type.Optional(
      Nullable(
        Type.String({
          maxLength: 512,
          description: 'splunk_hec: write-only, encrypted at rest; required on create, omitted on update keeps it',
        }),
      ),
    ),
    index: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
    sourcetype: Type.Optional(Nullable(Type.String({ maxLength: 255, description: 'Default _json' }))),
    source: Type.Optional(Nullable(Type.String({ maxLength: 255, description: 'Default dragnet' }))),
    host: Type.Optional(Nullable(Type.String({ maxLength: 255, description: 'syslog: required' }))),
    port: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 65535, description: 'syslog: default 6514' }))),
    format: Type.Optional(Nullable(SyslogFormat)),
    app_name: Type.Optional(Nullable(Type.String({ maxLength: 48, description: 'syslog APP-NAME, default dragnet' }))),
    facility: Type.Optional(
      Nullable(Type.Integer({ minimum: 0, maximum: 23, description: 'syslog facility, default 13 (log audit)' })),
    ),
    verify_tls: Type.Optional(Type.Boolean({ default: true })),
    ca_pem: Type.Optional(Nullable(Type.String({ maxLength: 65536 }))),
    // Read-only fields a client may echo back are accepted and ignored.
    has_token: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const DeliveryAttempt = Type.Object({
  id: Id,
  channel: Type.String({ description: 'email, webhook, splunk_hec or syslog' }),
  target: Type.String({ description: 'Recipient addresses, webhook or HEC URL, or syslog-tls://host:port' }),
  purpose: Type.String({ description: 'notification, test_email, test_webhook or test_siem_target' }),
  status: Type.String({ description: 'success or failed' }),
  status_code: Nullable(Type.Integer()),
  error: Nullable(Type.String()),
  duration_ms: Type.Integer(),
  rule_id: Nullable(Type.Integer()),
  match_id: Nullable(Type.Integer()),
  created_at: Timestamp,
});

export const TestEmailBody = Type.Object(
  { sender_id: IdInteger(), recipient: Type.String({ minLength: 3, maxLength: 254 }) },
  { additionalProperties: false },
);

export const PageQuery = Type.Object({
  page: Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 }),
  page_size: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
});

export const LinkedPage = <T extends TSchema>(item: T) =>
  Type.Object({
    count: Type.Integer(),
    next: Nullable(Type.String()),
    previous: Nullable(Type.String()),
    results: Type.Array(item),
  });

export const IdParams = Type.Object({ id: IdInteger() });
