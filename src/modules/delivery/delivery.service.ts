import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { SystemSenderConfig } from '../../config.ts';
import type {
  Database,
  EmailTemplateTable,
  RecipientTable,
  SenderTable,
  WebhookTable,
} from '../../db/schema.ts';
import type { Engine } from '../../db/store.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Metrics } from '../../lib/metrics.ts';
import type { KeyRing } from '../../lib/crypto.ts';
import { AppError, validationError } from '../../lib/errors.ts';
import type { BackgroundTasks } from '../../lib/log.ts';
import { normalizeEmail } from '../orgs/index.ts';
import { createAttemptLog, type AttemptLog } from './attempt-log.ts';
import { createDefaultableStore } from './defaultable-store.ts';
import { DEFAULT_TEMPLATE } from './email/default-template.ts';
import type { EmailTransport, SmtpAccount } from './email/email-transport.ts';
import { missingPlaceholders, renderTemplate, type TemplateValues } from './email/template-render.ts';
import { buildPayload, payloadKindFor, type AlertNotice } from './webhook/payloads.ts';
import { newWebhookSecret } from './webhook/signing.ts';
import type { WebhookTransport } from './webhook/webhook-transport.ts';
import { isoDate as iso } from '../../lib/iso-date.ts';

type RecipientRow = Selectable<RecipientTable>;
type SenderRow = Selectable<SenderTable>;
type TemplateRow = Selectable<EmailTemplateTable>;
type WebhookRow = Selectable<WebhookTable>;

export type DeliveryKind = 'recipient' | 'sender' | 'template' | 'webhook';

/** Active rules that reference a delivery resource (supplied by the rules module). */
export type ReferenceCheck = (orgId: number, kind: DeliveryKind, id: number, executor: Transaction<Database>) => Promise<{ id: number; name: string }[]>;

/** spec 8.2 */
export const DELIVERY_LIMITS = { recipients: 10, senders: 10, webhooks: 10, templates: 50 } as const;

/** Header names a webhook's custom headers cannot set (docs/api.md): Dragnet sets them. */
const RESERVED_WEBHOOK_HEADERS = new Set(['content-type', 'user-agent', 'x-alertsystem-signature', 'webhook-id', 'webhook-timestamp', 'webhook-signature']);
/**
 * Hop-by-hop and framing headers (RFC 9110 7.6.1, 9112): set by a tenant they would change how
 * the request is framed or routed (a second request smuggled in the body, an Upgrade, a proxy's
 * credentials), not just what the receiver reads.
 */
const FRAMING_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'expect', 'te', 'trailer', 'http2-settings']);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Visible ASCII, space and tab (RFC 9110 5.5 without obs-text): nothing a parser could read as a line end. */
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;

const bool = (value: number) => Number(value) === 1;

export interface SenderInput {
  email: string;
  server_host: string;
  port: number;
  username?: string | null;
  password?: string | null;
  encryption_method: 'SSL' | 'TLS';
  authentication_required?: boolean;
  is_default?: boolean;
}

export interface TemplateInput {
  name: string;
  subject: string;
  body: string;
  is_default?: boolean;
}

export interface WebhookInput {
  name: string;
  url: string;
  headers?: Record<string, string>;
  is_default?: boolean;
}

export function createDeliveryService(deps: {
  db: Kysely<Database>;
  engine: Engine;
  clock: Clock;
  keys: KeyRing;
  email: EmailTransport;
  webhook: WebhookTransport;
  metrics: Metrics;
  background: BackgroundTasks;
}) {
  const { db, clock, keys } = deps;
  const storeDeps = { db, engine: deps.engine, clock };
  const recipients = createDefaultableStore<RecipientRow>(storeDeps, { table: 'recipients', label: 'recipient', maxPerOrg: DELIVERY_LIMITS.recipients });
  const senders = createDefaultableStore<SenderRow>(storeDeps, { table: 'senders', label: 'sender', maxPerOrg: DELIVERY_LIMITS.senders, sharedRows: true });
  const templates = createDefaultableStore<TemplateRow>(storeDeps, { table: 'email_templates', label: 'template', maxPerOrg: DELIVERY_LIMITS.templates });
  const webhooks = createDefaultableStore<WebhookRow>(storeDeps, { table: 'webhooks', label: 'webhook', maxPerOrg: DELIVERY_LIMITS.webhooks });
  const attempts: AttemptLog = createAttemptLog({ db, clock, metrics: deps.metrics });
  let referenceCheck: ReferenceCheck = async () => [];

  const refuseIfReferenced = async (orgId: number, kind: DeliveryKind, id: number, tx: Transaction<Database>) => {
    const rules = await referenceCheck(orgId, kind, id, tx);
    if (rules.length) {
      throw new AppError('conflict', `this ${kind} is used by active monitoring rules: ${rules.map((r) => `${r.name} (id ${r.id})`).join(', ')}; detach or delete them first`, {
        extra: { rules },
      });
    }
  };

  // --- views: what the API returns (write-only fields never leave this module) ---
  const recipientView = (row: RecipientRow) => ({ id: Number(row.id), email: row.email, is_default: bool(row.is_default), created_at: iso(row.created_at) });

  const senderView = async (orgId: number, row: SenderRow) => ({
    id: Number(row.id),
    email: row.email,
    server_host: row.server_host,
    encryption_method: row.encryption_method as 'SSL' | 'TLS',
    authentication_required: bool(row.authentication_required),
    // The system sender is the default of an organization that has no sender of its own.
    is_default: row.org_id === null ? !(await senders.findDefault(orgId)) : bool(row.is_default),
    is_system_created: bool(row.is_system_created),
    created_at: iso(row.created_at),
  });

  const templateView = (row: TemplateRow) => ({
    id: Number(row.id),
    name: row.name,
    subject: row.subject,
    body: row.body,
    is_default: bool(row.is_default),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  });

  const webhookView = (row: WebhookRow) => ({
    id: Number(row.id),
    name: row.name,
    url: row.url,
    headers: JSON.parse(keys.decryptSecret(row.headers_sealed)) as Record<string, string>,
    secret: keys.decryptSecret(row.secret_sealed),
    is_default: bool(row.is_default),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  });

  // --- validation ---
  function checkedTemplate(input: TemplateInput) {
    const missing = missingPlaceholders(input.body);
    if (missing.length) {
      throw new AppError('validation_failed', `body: missing required placeholders ${missing.join(', ')}`, {
        fields: [{ field: 'body', message: `missing required placeholders: ${missing.join(', ')}` }],
        extra: { missing_placeholders: missing },
      });
    }
    if (!input.name.trim()) throw validationError('name', 'must not be empty');
    return { name: input.name.trim(), subject: input.subject, body: input.body, updated_at: clock.now().getTime() };
  }

  function checkedWebhook(input: WebhookInput) {
    let url: URL;
    try {
      url = new URL(input.url);
    } catch {
      throw validationError('url', 'must be an absolute http(s) URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw validationError('url', 'must use http or https');
    if (url.username || url.password) throw validationError('url', 'must not carry credentials; use headers');
    const headers = input.headers ?? {};
    for (const [name, value] of Object.entries(headers)) {
      const lower = name.toLowerCase();
      if (!HEADER_NAME.test(name)) throw validationError(`headers.${name}`, 'is not a valid header name');
      if (RESERVED_WEBHOOK_HEADERS.has(lower)) throw validationError(`headers.${name}`, 'is set by Dragnet and cannot be overridden');
      if (FRAMING_HEADERS.has(lower) || lower.startsWith('proxy-')) throw validationError(`headers.${name}`, 'is a hop-by-hop or framing header and cannot be set');
      if (!HEADER_VALUE.test(value)) throw validationError(`headers.${name}`, 'must be printable ASCII: no control characters, line breaks or non-ASCII characters');
    }
    if (!input.name.trim()) throw validationError('name', 'must not be empty');
    return { name: input.name.trim(), url: input.url, headers_sealed: keys.encryptSecret(JSON.stringify(headers)), updated_at: clock.now().getTime() };
  }

  function smtpAccount(row: SenderRow): SmtpAccount {
    return {
      from: row.email,
      host: row.server_host,
      port: Number(row.port),
      encryption: row.encryption_method as 'SSL' | 'TLS',
      authenticationRequired: bool(row.authentication_required),
      username: row.username_sealed ? keys.decryptSecret(row.username_sealed) : null,
      password: row.password_sealed ? keys.decryptSecret(row.password_sealed) : null,
      operatorSet: bool(row.is_system_created),
    };
  }

  /** Every organization starts with the shipped template (created under the org lock: once). */
  async function ensureDefaultTemplate(orgId: number): Promise<void> {
    if (await templates.findDefault(orgId)) return;
    await templates.createIfNone(orgId, { ...DEFAULT_TEMPLATE, updated_at: clock.now().getTime() });
  }

  return {
    setReferenceCheck(check: ReferenceCheck) {
      referenceCheck = check;
    },

    recipients: {
      list: async (orgId: number, page: { offset: number; limit: number }) => {
        const { rows, total } = await recipients.list(orgId, page);
        return { results: rows.map(recipientView), total };
      },
      get: async (orgId: number, id: number) => recipientView(await recipients.get(orgId, id)),
      async create(orgId: number, input: { email: string; is_default?: boolean }) {
        return recipientView(await recipients.create(orgId, { email: normalizeEmail(input.email) }, input.is_default));
      },
      delete: (orgId: number, id: number) => recipients.delete(orgId, id, (_row, tx) => refuseIfReferenced(orgId, 'recipient', id, tx)),
    },

    senders: {
      async list(orgId: number, page: { offset: number; limit: number }) {
        const { rows, total } = await senders.list(orgId, page);
        return { results: await Promise.all(rows.map((row) => senderView(orgId, row))), total };
      },
      get: async (orgId: number, id: number) => senderView(orgId, await senders.get(orgId, id)),
      async create(orgId: number, input: SenderInput) {
        const authenticationRequired = input.authentication_required ?? true;
        if (authenticationRequired && !input.username) throw validationError('username', 'is required when authentication_required is true');
        if (authenticationRequired && !input.password) throw validationError('password', 'is required when authentication_required is true');
        const row = await senders.create(
          orgId,
          {
            email: normalizeEmail(input.email),
            server_host: input.server_host.trim(),
            port: input.port,
            username_sealed: input.username ? keys.encryptSecret(input.username) : null,
            password_sealed: input.password ? keys.encryptSecret(input.password) : null,
            encryption_method: input.encryption_method,
            authentication_required: authenticationRequired ? 1 : 0,
            is_system_created: 0,
          },
          input.is_default,
        );
        return senderView(orgId, row);
      },
      delete: (orgId: number, id: number) =>
        senders.delete(orgId, id, async (row, tx) => {
          if (bool(row.is_system_created)) throw new AppError('forbidden', 'the system sender cannot be deleted');
          await refuseIfReferenced(orgId, 'sender', id, tx);
        }),
    },

    templates: {
      async list(orgId: number, page: { offset: number; limit: number }) {
        await ensureDefaultTemplate(orgId);
        const { rows, total } = await templates.list(orgId, page);
        return { results: rows.map(templateView), total };
      },
      get: async (orgId: number, id: number) => templateView(await templates.get(orgId, id)),
      create: async (orgId: number, input: TemplateInput) => templateView(await templates.create(orgId, checkedTemplate(input), input.is_default)),
      update: async (orgId: number, id: number, input: TemplateInput) => templateView(await templates.update(orgId, id, checkedTemplate(input), input.is_default)),
      delete: (orgId: number, id: number) => templates.delete(orgId, id, (_row, tx) => refuseIfReferenced(orgId, 'template', id, tx)),
      ensureDefault: ensureDefaultTemplate,
    },

    webhooks: {
      list: async (orgId: number, page: { offset: number; limit: number }) => {
        const { rows, total } = await webhooks.list(orgId, page);
        return { results: rows.map(webhookView), total };
      },
      get: async (orgId: number, id: number) => webhookView(await webhooks.get(orgId, id)),
      async create(orgId: number, input: WebhookInput) {
        // spec 2.8: the secret is always the server's own; any value sent is ignored.
        const values = { ...checkedWebhook(input), secret_sealed: keys.encryptSecret(newWebhookSecret()) };
        return webhookView(await webhooks.create(orgId, values, input.is_default));
      },
      update: async (orgId: number, id: number, input: WebhookInput) => webhookView(await webhooks.update(orgId, id, checkedWebhook(input), input.is_default)),
      delete: (orgId: number, id: number) => webhooks.delete(orgId, id, (_row, tx) => refuseIfReferenced(orgId, 'webhook', id, tx)),
    },

    attempts,

    /**
     * spec 4.4: answer 202 at once; the message goes out in the background and is recorded.
     * Its {match_detail_link} opens the dashboard, so the link in the test shows where real ones lead.
     */
    async queueTestEmail(orgId: number, senderId: number, rawRecipient: string, dashboardUrl: string) {
      const recipient = normalizeEmail(rawRecipient, 'recipient');
      const sender = await senders.get(orgId, senderId);
      await ensureDefaultTemplate(orgId);
      const template = (await templates.findDefault(orgId))!;
      const now = clock.now();
      const message = renderTemplate(template, {
        current_date: now.toISOString().slice(0, 10),
        alert_rule_name: 'Test message',
        number_of_hits: 0,
        service: 'Dragnet test',
        match_detail_link: `${dashboardUrl}/`,
        total_results: 0,
        excluded_count: 0,
      });
      // Nobody awaits it (the answer is 202): even the attempt's own insert failing is only logged.
      deps.background.run('delivery: test email', async () => {
        const outcome = await deps.email.send(smtpAccount(sender), [recipient], { ...message, subject: `[Test] ${message.subject}` });
        await attempts.record({ orgId, channel: 'email', target: recipient, purpose: 'test_email', ...outcome, statusCode: null });
      });
      return { message: 'test email queued', sender_id: Number(sender.id), recipient };
    },

    /** Sends a sample notification to a webhook now and returns the recorded attempt. */
    async testWebhook(orgId: number, webhookId: number, dashboardUrl: string) {
      const row = await webhooks.get(orgId, webhookId);
      return this.deliverWebhook(orgId, row, {
        alertRuleName: 'Test notification',
        service: 'Dragnet test',
        totalMatches: 0,
        excludedMatches: 0,
        resultsUrl: `${dashboardUrl}/`,
        at: clock.now(),
      }, { purpose: 'test_webhook' });
    },

    async deliverWebhook(orgId: number, row: WebhookRow, notice: AlertNotice, context: { purpose: string; ruleId?: number; matchId?: number }) {
      const view = webhookView(row);
      const payload = buildPayload(payloadKindFor(new URL(view.url)), notice);
      const outcome = await deps.webhook.send({ url: view.url, headers: view.headers, secret: view.secret }, payload);
      return attempts.record({ orgId, channel: 'webhook', target: view.url, purpose: context.purpose, ruleId: context.ruleId, matchId: context.matchId, ...outcome });
    },

    async deliverEmail(orgId: number, input: { senderId: number | null; templateId: number; recipients: string[]; values: TemplateValues; ruleId?: number; matchId?: number }) {
      const sender = input.senderId === null ? await this.defaultSenderRow(orgId) : await senders.get(orgId, input.senderId);
      const template = await templates.get(orgId, input.templateId);
      const target = input.recipients.join(', ');
      if (!sender) {
        return attempts.record({ orgId, channel: 'email', target, purpose: 'notification', ok: false, statusCode: null, error: 'no sender: the rule has none and the organization has no default', durationMs: 0, ruleId: input.ruleId, matchId: input.matchId });
      }
      const outcome = await deps.email.send(smtpAccount(sender), input.recipients, renderTemplate(template, input.values));
      return attempts.record({ orgId, channel: 'email', target, purpose: 'notification', statusCode: null, ruleId: input.ruleId, matchId: input.matchId, ...outcome });
    },

    async defaultSenderRow(orgId: number): Promise<SenderRow | undefined> {
      return (await senders.findDefault(orgId)) ?? (await db.selectFrom('senders').selectAll().where('org_id', 'is', null).executeTakeFirst());
    },

    webhookRow: (orgId: number, id: number) => webhooks.get(orgId, id),
    recipientRows: (orgId: number, ids: number[]) =>
      ids.length ? db.selectFrom('recipients').selectAll().where('org_id', '=', orgId).where('id', 'in', ids).execute() : Promise.resolve([]),

    /** The operator's system sender (DRAGNET_SYSTEM_SMTP_URL), kept in step at start-up. */
    async syncSystemSender(config: SystemSenderConfig | undefined) {
      if (!config) return;
      const values = {
        email: config.from,
        server_host: config.host,
        port: config.port,
        username_sealed: config.username ? keys.encryptSecret(config.username) : null,
        password_sealed: config.password ? keys.encryptSecret(config.password) : null,
        encryption_method: config.encryption,
        authentication_required: config.username ? 1 : 0,
      };
      // One system sender (unique index, migration 0011): every process starting at once
      // writes the same row.
      await db
        .insertInto('senders')
        .values({ ...values, org_id: null, is_default: 0, is_system_created: 1, created_at: clock.now().getTime() })
        .onConflict((oc) => oc.column('is_system_created').where(sql<boolean>`is_system_created = 1`).doUpdateSet(values))
        .execute();
    },

    /** Resolves when every background delivery started so far has finished (shutdown, tests). */
    idle: () => deps.background.settle(),
  };
}

export type DeliveryService = ReturnType<typeof createDeliveryService>;
