import type { Kysely } from 'kysely';
import type { Database } from '../../../db/schema.ts';
import type { Clock } from '../../../lib/clock.ts';
import type { KeyRing } from '../../../lib/crypto.ts';
import { exportedHit, selectExportedHits } from '../../cti/index.ts';
import type { AttemptLog } from '../attempt-log.ts';
import type { HecTransport } from './hec-transport.ts';
import { hecBodies, hecEvent, octetCounted, originHost, syslogMessage, type SiemEvent } from './siem-events.ts';
import { SYSLOG_TLS_PORT, type SiemTargetRow, type SiemTargetService } from './siem-target.service.ts';
import type { SyslogTransport } from './syslog-transport.ts';

/** What a notification's events say besides each hit: who, which incident, where to look. */
export interface SiemNotice {
  org: { id: number; name: string };
  ruleId: number;
  matchId: number;
  link: string;
  sourceAlias: string;
}

/** How the delivery log names a target: the collector URL, or syslog-tls://host:port. */
export const siemTargetLabel = (row: SiemTargetRow) =>
  row.kind === 'splunk_hec'
    ? row.url!
    : `syslog-tls://${row.host!.includes(':') ? `[${row.host}]` : row.host}:${row.port ?? SYSLOG_TLS_PORT}`;

/** Sends hits to Splunk HEC and syslog targets and records every attempt (channel splunk_hec or syslog). */
export function createSiemDispatch(deps: {
  db: Kysely<Database>;
  clock: Clock;
  keys: KeyRing;
  attempts: AttemptLog;
  hec: HecTransport;
  syslog: SyslogTransport;
  targets: SiemTargetService;
}) {
  const { keys, attempts } = deps;

  async function sendTo(
    orgId: number,
    row: SiemTargetRow,
    events: SiemEvent[],
    context: { purpose: string; ruleId?: number; matchId?: number },
  ) {
    const host = originHost();
    const verifyTls = Number(row.verify_tls) === 1;
    const outcome =
      row.kind === 'splunk_hec'
        ? await deps.hec.send(
            { url: row.url!, token: keys.decryptSecret(row.token_sealed!), verifyTls, caPem: row.ca_pem },
            hecBodies(
              events.map((event) =>
                hecEvent(event, { index: row.hec_index, source: row.source, sourcetype: row.sourcetype }, host),
              ),
            ),
          )
        : await deps.syslog.send(
            { host: row.host!, port: Number(row.port ?? SYSLOG_TLS_PORT), verifyTls, caPem: row.ca_pem },
            events.map((event) =>
              octetCounted(
                syslogMessage(
                  event,
                  {
                    format: row.format === 'cef' ? 'cef' : 'json',
                    appName: row.app_name ?? 'dragnet',
                    facility: Number(row.facility ?? 13),
                    host,
                  },
                  deps.clock.now(),
                ),
              ),
            ),
          );
    return attempts.record({
      orgId,
      channel: row.kind === 'splunk_hec' ? 'splunk_hec' : 'syslog',
      target: siemTargetLabel(row),
      purpose: context.purpose,
      ruleId: context.ruleId,
      matchId: context.matchId,
      ...outcome,
    });
  }

  return {
    /**
     * A new match's hits (excluded ones left out) to every SIEM target of its rule, one after
     * another; true when every target took them. A rule without targets any more: false.
     */
    async deliverSiem(notice: SiemNotice): Promise<boolean> {
      const targets = await deps.targets.ofRule(notice.org.id, notice.ruleId);
      if (targets.length === 0) return false;
      const hits = (
        await selectExportedHits(deps.db)
          .where('match_hits.match_id', '=', notice.matchId)
          .where('match_hits.is_excluded', '=', 0)
          .orderBy('match_hits.id')
          .execute()
      ).map(exportedHit);
      const events: SiemEvent[] = hits.map((hit) => ({
        org: notice.org,
        rule: { id: hit.ruleId, name: hit.ruleName },
        incident: { id: hit.incidentId, link: notice.link },
        source: { id: hit.sourceId, alias: notice.sourceAlias },
        tlp: hit.tlp,
        hit: { key: hit.key, date: new Date(hit.date), fields: hit.data },
      }));
      let ok = true;
      for (const target of targets) {
        const attempt = await sendTo(notice.org.id, target, events, {
          purpose: 'notification',
          ruleId: notice.ruleId,
          matchId: notice.matchId,
        });
        ok &&= attempt.status === 'success';
      }
      return ok;
    },

    /** Sends one sample event to a target now and returns the recorded attempt. */
    async testSiemTarget(orgId: number, id: number, dashboardUrl: string) {
      const row = await deps.targets.row(orgId, id);
      const sample: SiemEvent = {
        org: { id: orgId, name: 'Dragnet test' },
        rule: { id: 0, name: 'Test notification' },
        incident: { id: 0, link: `${dashboardUrl}/` },
        source: { id: 0, alias: 'test' },
        tlp: 'clear',
        hit: { key: 'test', date: deps.clock.now(), fields: { message: 'A test event from Dragnet' } },
      };
      return sendTo(orgId, row, [sample], { purpose: 'test_siem_target' });
    },
  };
}
