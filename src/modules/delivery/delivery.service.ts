import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { Engine } from '../../db/store.ts';
import type { Clock } from '../../lib/clock.ts';
import type { KeyRing } from '../../lib/crypto.ts';
import type { BackgroundTasks } from '../../lib/log.ts';
import type { Metrics } from '../../lib/metrics.ts';
import { createAttemptLog } from './attempt-log.ts';
import { createDefaultableStore } from './defaultable-store.ts';
import { createReferenceGuard } from './delivery-references.ts';
import type { EmailTransport } from './email/email-transport.ts';
import { createMessageDispatch } from './message-dispatch.ts';
import { createRecipientService, type RecipientRow } from './recipient.service.ts';
import { createSenderService, type SenderRow } from './sender.service.ts';
import { createTemplateService, type TemplateRow } from './template.service.ts';
import type { WebhookTransport } from './webhook/webhook-transport.ts';
import type { HecTransport } from './siem/hec-transport.ts';
import { createSiemDispatch } from './siem/siem-dispatch.ts';
import { createSiemTargetService } from './siem/siem-target.service.ts';
import type { SyslogTransport } from './siem/syslog-transport.ts';
import { createWebhookService, type WebhookRow } from './webhook.service.ts';

/** spec 8.2 */
export const DELIVERY_LIMITS = { recipients: 10, senders: 10, webhooks: 10, templates: 50 } as const;

export function createDeliveryService(deps: {
  db: Kysely<Database>;
  engine: Engine;
  clock: Clock;
  keys: KeyRing;
  email: EmailTransport;
  webhook: WebhookTransport;
  siem: { hec: HecTransport; syslog: SyslogTransport };
  metrics: Metrics;
  background: BackgroundTasks;
}) {
  const { db, clock, keys } = deps;
  const storeDeps = { db, engine: deps.engine, clock };
  const stores = {
    recipients: createDefaultableStore<RecipientRow>(storeDeps, {
      table: 'recipients',
      label: 'recipient',
      maxPerOrg: DELIVERY_LIMITS.recipients,
    }),
    senders: createDefaultableStore<SenderRow>(storeDeps, {
      table: 'senders',
      label: 'sender',
      maxPerOrg: DELIVERY_LIMITS.senders,
      sharedRows: true,
    }),
    templates: createDefaultableStore<TemplateRow>(storeDeps, {
      table: 'email_templates',
      label: 'template',
      maxPerOrg: DELIVERY_LIMITS.templates,
    }),
    webhooks: createDefaultableStore<WebhookRow>(storeDeps, {
      table: 'webhooks',
      label: 'webhook',
      maxPerOrg: DELIVERY_LIMITS.webhooks,
    }),
  };
  const references = createReferenceGuard();
  const { refuseIfReferenced } = references;
  const attempts = createAttemptLog({ db, clock, metrics: deps.metrics });
  const senders = createSenderService({ db, clock, keys, store: stores.senders, refuseIfReferenced });
  const templates = createTemplateService({ clock, store: stores.templates, refuseIfReferenced });
  const siemTargets = createSiemTargetService({ db, engine: deps.engine, clock, keys, refuseIfReferenced });

  return {
    setReferenceCheck: references.setReferenceCheck,
    recipients: createRecipientService({ store: stores.recipients, refuseIfReferenced }),
    senders,
    templates,
    webhooks: createWebhookService({ clock, keys, store: stores.webhooks, refuseIfReferenced }),
    siemTargets,
    attempts,
    ...createSiemDispatch({ db, clock, keys, attempts, ...deps.siem, targets: siemTargets }),
    ...createMessageDispatch({
      clock,
      keys,
      email: deps.email,
      webhook: deps.webhook,
      attempts,
      background: deps.background,
      senders: { store: stores.senders, defaultRow: senders.defaultRow },
      templates: { store: stores.templates, ensureDefault: templates.ensureDefault },
      webhooks: stores.webhooks,
    }),

    webhookRow: (orgId: number, id: number) => stores.webhooks.get(orgId, id),
    recipientRows: (orgId: number, ids: number[]) =>
      ids.length
        ? db.selectFrom('recipients').selectAll().where('org_id', '=', orgId).where('id', 'in', ids).execute()
        : Promise.resolve([]),

    /** Resolves when every background delivery started so far has finished (shutdown, tests). */
    idle: () => deps.background.settle(),
  };
}

export type DeliveryService = ReturnType<typeof createDeliveryService>;
