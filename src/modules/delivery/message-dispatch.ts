import type { Clock } from '../../lib/clock.ts';
import type { KeyRing } from '../../lib/crypto.ts';
import type { BackgroundTasks } from '../../lib/log.ts';
import { normalizeEmail } from '../orgs/index.ts';
import type { AttemptLog } from './attempt-log.ts';
import type { DefaultableStore } from './defaultable-store.ts';
import type { EmailTransport } from './email/email-transport.ts';
import { renderTemplate, type TemplateValues } from './email/template-render.ts';
import { smtpAccount, type SenderRow } from './sender.service.ts';
import type { TemplateRow } from './template.service.ts';
import { buildPayload, payloadKindFor, type AlertNotice } from './webhook/payloads.ts';
import type { WebhookTransport } from './webhook/webhook-transport.ts';
import { webhookView, type WebhookRow } from './webhook.service.ts';

/** Sends notifications and tests by email and webhook, and records every attempt (spec 4.4). */
export function createMessageDispatch(deps: {
  clock: Clock;
  keys: KeyRing;
  email: EmailTransport;
  webhook: WebhookTransport;
  attempts: AttemptLog;
  background: BackgroundTasks;
  senders: { store: DefaultableStore<SenderRow>; defaultRow: (orgId: number) => Promise<SenderRow | undefined> };
  templates: { store: DefaultableStore<TemplateRow>; ensureDefault: (orgId: number) => Promise<void> };
  webhooks: DefaultableStore<WebhookRow>;
}) {
  const { clock, keys, attempts, senders, templates } = deps;

  async function deliverWebhook(
    orgId: number,
    row: WebhookRow,
    notice: AlertNotice,
    context: { purpose: string; ruleId?: number; matchId?: number },
  ) {
    const view = webhookView(keys, row);
    const payload = buildPayload(payloadKindFor(new URL(view.url)), notice);
    const outcome = await deps.webhook.send({ url: view.url, headers: view.headers, secret: view.secret }, payload);
    return attempts.record({
      orgId,
      channel: 'webhook',
      target: view.url,
      purpose: context.purpose,
      ruleId: context.ruleId,
      matchId: context.matchId,
      ...outcome,
    });
  }

  return {
    /**
     * spec 4.4: answer 202 at once; the message goes out in the background and is recorded.
     * Its {match_detail_link} opens the dashboard, so the link in the test shows where real ones lead.
     */
    async queueTestEmail(orgId: number, senderId: number, rawRecipient: string, dashboardUrl: string) {
      const recipient = normalizeEmail(rawRecipient, 'recipient');
      const sender = await senders.store.get(orgId, senderId);
      await templates.ensureDefault(orgId);
      const template = (await templates.store.findDefault(orgId))!;
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
        const outcome = await deps.email.send(smtpAccount(keys, sender), [recipient], {
          ...message,
          subject: `[Test] ${message.subject}`,
        });
        await attempts.record({
          orgId,
          channel: 'email',
          target: recipient,
          purpose: 'test_email',
          ...outcome,
          statusCode: null,
        });
      });
      return { message: 'test email queued', sender_id: Number(sender.id), recipient };
    },

    /** Sends a sample notification to a webhook now and returns the recorded attempt. */
    async testWebhook(orgId: number, webhookId: number, dashboardUrl: string) {
      const row = await deps.webhooks.get(orgId, webhookId);
      return deliverWebhook(
        orgId,
        row,
        {
          alertRuleName: 'Test notification',
          service: 'Dragnet test',
          totalMatches: 0,
          excludedMatches: 0,
          resultsUrl: `${dashboardUrl}/`,
          at: clock.now(),
        },
        { purpose: 'test_webhook' },
      );
    },

    deliverWebhook,

    async deliverEmail(
      orgId: number,
      input: {
        senderId: number | null;
        templateId: number;
        recipients: string[];
        values: TemplateValues;
        ruleId?: number;
        matchId?: number;
      },
    ) {
      const sender =
        input.senderId === null ? await senders.defaultRow(orgId) : await senders.store.get(orgId, input.senderId);
      const template = await templates.store.get(orgId, input.templateId);
      const target = input.recipients.join(', ');
      if (!sender) {
        return attempts.record({
          orgId,
          channel: 'email',
          target,
          purpose: 'notification',
          ok: false,
          statusCode: null,
          error: 'no sender: the rule has none and the organization has no default',
          durationMs: 0,
          ruleId: input.ruleId,
          matchId: input.matchId,
        });
      }
      const outcome = await deps.email.send(
        smtpAccount(keys, sender),
        input.recipients,
        renderTemplate(template, input.values),
      );
      return attempts.record({
        orgId,
        channel: 'email',
        target,
        purpose: 'notification',
        statusCode: null,
        ruleId: input.ruleId,
        matchId: input.matchId,
        ...outcome,
      });
    },
  };
}
