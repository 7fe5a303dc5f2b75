import { setTimeout as sleep } from 'node:timers/promises';
import type { Kysely, Selectable } from 'kysely';
import { claimable } from '../../db/claim.ts';
import type { Database, NotificationTable } from '../../db/schema.ts';
import type { Engine } from '../../db/store.ts';
import type { WorkerPresence } from '../../jobs/worker-presence.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Log } from '../../lib/log.ts';
import type { DeliveryService } from '../delivery/index.ts';
import type { OrganizationService } from '../orgs/index.ts';
import { findSource } from '../sources/index.ts';

/**
 * `{dashboard_url}/incidents/<id>?org=<org id>`: the dashboard's page of the match (spec 2.7,
 * 6.2), which asks to sign in first. The organization lets an MSSP analyst's dashboard act for
 * the client the match belongs to. Links sent before it existed (`/matches/<id>`, no `org`) lead
 * there too (web/src/router.tsx).
 */
export const matchLink = (dashboardUrl: string, match: { id: number; orgId: number }) =>
  `${dashboardUrl}/incidents/${match.id}?org=${match.orgId}`;

/**
 * Deliveries of one organization in flight at once: one, so an organization's notifications
 * still go out in outbox order (a match's email before its webhook), while organizations do not
 * wait for each other.
 */
const PER_ORGANIZATION = 1;
/** Deliveries in flight at once per dispatcher. */
const MAX_IN_FLIGHT = 16;
/** How often a dispatcher waiting on slow deliveries looks for newly pending ones. */
const RECHECK_MS = 1000;

interface NotifierDeps {
  db: Kysely<Database>;
  engine: Engine;
  clock: Clock;
  presence: WorkerPresence;
  delivery: DeliveryService;
  organizations: OrganizationService;
  log: Log;
}

/** Sends one notification through its rule's webhook, email or SIEM targets; true when it arrived. */
async function send(
  deps: NotifierDeps,
  notification: { id: number; org_id: number; rule_id: number; match_id: number; channel: string },
): Promise<boolean> {
  const { db, clock, delivery } = deps;
  const rule = await db
    .selectFrom('alert_rules')
    .selectAll()
    .where('id', '=', notification.rule_id)
    .executeTakeFirstOrThrow();
  const match = await db
    .selectFrom('matches')
    .selectAll()
    .where('id', '=', notification.match_id)
    .executeTakeFirstOrThrow();
  const org = await deps.organizations.get(Number(notification.org_id));
  const source = findSource(Number(rule.service_id));
  const total = Number(match.total_hits);
  const excluded = Number(match.excluded_hits);
  const link = matchLink(org.dashboard_url, { id: Number(match.id), orgId: org.id });
  const context = { ruleId: Number(rule.id), matchId: Number(match.id) };
  if (notification.channel === 'siem') {
    return delivery.deliverSiem({
      org: { id: org.id, name: org.name },
      ...context,
      link,
      sourceAlias: source?.alias ?? String(rule.service_id),
    });
  }
  if (notification.channel === 'webhook') {
    if (rule.webhook_id === null) return false;
    const webhook = await delivery.webhookRow(Number(rule.org_id), Number(rule.webhook_id));
    const attempt = await delivery.deliverWebhook(
      Number(rule.org_id),
      webhook,
      {
        alertRuleName: rule.name,
        service: source?.alias ?? String(rule.service_id),
        totalMatches: total,
        excludedMatches: excluded,
        resultsUrl: link,
        at: clock.now(),
      },
      { purpose: 'notification', ...context },
    );
    return attempt.status === 'success';
  }
  const recipientIds = (
    await db.selectFrom('alert_rule_recipients').select('recipient_id').where('rule_id', '=', rule.id).execute()
  ).map((r) => Number(r.recipient_id));
  const recipients = (await delivery.recipientRows(Number(rule.org_id), recipientIds)).map((r) => r.email);
  if (recipients.length === 0 || rule.email_template_id === null) return false;
  const attempt = await delivery.deliverEmail(Number(rule.org_id), {
    senderId: rule.sender_id === null ? null : Number(rule.sender_id),
    templateId: Number(rule.email_template_id),
    recipients,
    values: {
      current_date: clock.now().toISOString().slice(0, 10),
      alert_rule_name: rule.name,
      number_of_hits: total - excluded,
      service: source?.alias ?? String(rule.service_id),
      match_detail_link: link,
      total_results: total,
      excluded_count: excluded,
    },
    ...context,
  });
  return attempt.status === 'success';
}

/**
 * Delivers the notification outbox. A dispatcher claims one notification at a time (FOR UPDATE
 * SKIP LOCKED on PostgreSQL: dispatchers at once take different ones), sends it once through
 * the delivery transports (spec 6.2: no retry, SIEM targets neither; every attempt is recorded there) and marks it
 * sent or failed. Pending notifications survive a crash and are sent after a restart; one whose
 * send was in flight when its worker died may have arrived, so once that worker is taken for
 * dead (src/jobs/worker-presence.ts) it is marked failed, never sent twice.
 */
export function createNotifier(deps: NotifierDeps) {
  const { db, engine, clock, presence, log } = deps;

  /** Sends one claimed notification and settles its outbox row; a failure is logged, never thrown. */
  async function deliver(notification: Selectable<NotificationTable>): Promise<void> {
    let ok = false;
    try {
      ok = await send(deps, {
        ...notification,
        id: Number(notification.id),
        org_id: Number(notification.org_id),
        rule_id: Number(notification.rule_id),
        match_id: Number(notification.match_id),
      });
    } catch (error) {
      log(`notification ${notification.id} failed`, error);
    } finally {
      await db
        .updateTable('notifications')
        .set({ status: ok ? 'sent' : 'failed', sent_at: clock.now().getTime() })
        .where('id', '=', notification.id)
        .where('claimed_by', '=', presence.id)
        .execute()
        .catch((error: unknown) => log(`notification ${notification.id}: status not saved`, error));
    }
  }

  /** The oldest pending notification of an organization that has a free share, claimed for this worker. */
  function claimNext(saturated: number[]) {
    let next = db.selectFrom('notifications').select('id').where('status', '=', 'pending');
    if (saturated.length) next = next.where('org_id', 'not in', saturated);
    return db
      .updateTable('notifications')
      .set({ status: 'sending', claimed_by: presence.id })
      .where('id', 'in', claimable(next.orderBy('id').limit(1), engine))
      .returningAll()
      .executeTakeFirst();
  }

  return {
    /**
     * Sends pending notifications, at most `limit`; returns how many were handled. They go out
     * side by side, at most PER_ORGANIZATION of one organization at a time: a receiver that
     * takes its time (up to the delivery timeout) holds up only its own organization's later
     * notifications, and a notification of another organization that becomes pending meanwhile
     * is claimed within RECHECK_MS. Resolves when every delivery it started has finished.
     */
    async dispatchPending(limit = 100): Promise<number> {
      await presence.ensure();
      await db
        .updateTable('notifications')
        .set({ status: 'failed', sent_at: clock.now().getTime() })
        .where('status', '=', 'sending')
        .where(presence.abandoned('notifications.claimed_by'))
        .execute();
      const perOrganization = new Map<number, number>();
      const running = new Set<Promise<void>>();
      let handled = 0;
      while (handled < limit) {
        const saturated = [...perOrganization].filter(([, n]) => n >= PER_ORGANIZATION).map(([org]) => org);
        const notification = running.size < MAX_IN_FLIGHT ? await claimNext(saturated) : undefined;
        if (!notification) {
          // An organization left out of the claim may have finished its deliveries meanwhile:
          // its pending notifications are claimable now, and the dispatch must not end before them.
          if (saturated.some((org) => perOrganization.get(org)! < PER_ORGANIZATION)) continue;
          if (running.size === 0) break;
          // Wait for a free slot, or look again shortly for another organization's new work.
          const pause = new AbortController();
          await Promise.race([
            ...running,
            sleep(RECHECK_MS, undefined, { signal: pause.signal }).catch(() => undefined),
          ]);
          pause.abort();
          continue;
        }
        handled++;
        const org = Number(notification.org_id);
        perOrganization.set(org, (perOrganization.get(org) ?? 0) + 1);
        const work: Promise<void> = deliver(notification).finally(() => {
          perOrganization.set(org, perOrganization.get(org)! - 1);
          running.delete(work);
        });
        running.add(work);
      }
      await Promise.all(running);
      return handled;
    },
  };
}
