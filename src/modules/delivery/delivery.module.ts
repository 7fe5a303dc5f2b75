import type { DeliveryConfig } from '../../config.ts';
import type { Store } from '../../db/store.ts';
import type { Clock } from '../../lib/clock.ts';
import type { KeyRing } from '../../lib/crypto.ts';
import type { BackgroundTasks } from '../../lib/log.ts';
import type { Metrics } from '../../lib/metrics.ts';
import type { AuditLog } from '../audit/index.ts';
import { deliveryRoutes } from './delivery.routes.ts';
import { createDeliveryService } from './delivery.service.ts';
import { createEmailTransport } from './email/email-transport.ts';
import { createOutboundHttp, type OutboundGuard } from '../../lib/outbound/index.ts';
import { createWebhookTransport } from './webhook/webhook-transport.ts';
import { createHecTransport } from './siem/hec-transport.ts';
import { createSyslogTransport } from './siem/syslog-transport.ts';

export async function createDeliveryModule(deps: {
  store: Store;
  clock: Clock;
  keys: KeyRing;
  config: DeliveryConfig;
  dashboardUrl: (orgId: number) => Promise<string>;
  metrics: Metrics;
  audit: AuditLog;
  /** Every webhook and SMTP connection goes through it (src/lib/outbound). */
  guard: OutboundGuard;
  background: BackgroundTasks;
}) {
  const webhook = createWebhookTransport({
    http: createOutboundHttp(deps.guard, { timeoutMs: deps.config.webhookTimeoutMs }),
    timeoutMs: deps.config.webhookTimeoutMs,
    clock: deps.clock,
  });
  const service = createDeliveryService({
    db: deps.store.db,
    engine: deps.store.engine,
    clock: deps.clock,
    keys: deps.keys,
    email: createEmailTransport({ ...deps.config.smtp, guard: deps.guard }),
    webhook,
    // SIEM targets: the webhooks' guard and timeout (docs/siem.md).
    siem: {
      hec: createHecTransport({ guard: deps.guard, timeoutMs: deps.config.webhookTimeoutMs }),
      syslog: createSyslogTransport({ guard: deps.guard, timeoutMs: deps.config.webhookTimeoutMs }),
    },
    metrics: deps.metrics,
    background: deps.background,
  });
  await service.senders.syncSystemSender(deps.config.systemSender);
  return {
    service,
    routes: deliveryRoutes({ delivery: service, audit: deps.audit, dashboardUrl: deps.dashboardUrl }),
    async close() {
      await service.idle();
      await webhook.close();
    },
  };
}
