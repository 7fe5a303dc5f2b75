import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Metrics } from '../../lib/metrics.ts';
import { storableText } from '../../lib/storable-text.ts';

export interface AttemptRecord {
  orgId: number;
  channel: 'email' | 'webhook' | 'splunk_hec' | 'syslog';
  target: string;
  purpose: string;
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  ruleId?: number;
  matchId?: number;
}

export interface AttemptFilter {
  channel?: string;
  status?: string;
  ruleId?: number;
}

/** Longest text kept: our errors are a sentence; anything longer is not for reading. */
const MAX_TEXT = 1000;

/** Every delivery attempt, successful or not, so an operator can see why an alert did not arrive. */
export function createAttemptLog(deps: { db: Kysely<Database>; clock: Clock; metrics: Metrics }) {
  const { db, clock } = deps;
  const view = (row: Awaited<ReturnType<typeof listRows>>[number]) => ({
    id: Number(row.id),
    channel: row.channel,
    target: row.target,
    purpose: row.purpose,
    status: row.status,
    status_code: row.status_code === null ? null : Number(row.status_code),
    error: row.error,
    duration_ms: Number(row.duration_ms),
    rule_id: row.rule_id === null ? null : Number(row.rule_id),
    match_id: row.match_id === null ? null : Number(row.match_id),
    created_at: new Date(Number(row.created_at)).toISOString(),
  });
  const filtered = (orgId: number, filter: AttemptFilter) => {
    let query = db.selectFrom('delivery_attempts').where('org_id', '=', orgId);
    if (filter.channel) query = query.where('channel', '=', filter.channel);
    if (filter.status) query = query.where('status', '=', filter.status);
    if (filter.ruleId !== undefined) query = query.where('rule_id', '=', filter.ruleId);
    return query;
  };
  const listRows = (orgId: number, filter: AttemptFilter & { offset: number; limit: number }) =>
    filtered(orgId, filter).selectAll().orderBy('id', 'desc').offset(filter.offset).limit(filter.limit).execute();

  return {
    async record(attempt: AttemptRecord) {
      deps.metrics.delivery(attempt);
      const row = await db
        .insertInto('delivery_attempts')
        .values({
          org_id: attempt.orgId,
          channel: attempt.channel,
          target: storableText(attempt.target, MAX_TEXT),
          purpose: attempt.purpose,
          status: attempt.ok ? 'success' : 'failed',
          status_code: attempt.statusCode,
          error: attempt.error === null ? null : storableText(attempt.error, MAX_TEXT),
          duration_ms: attempt.durationMs,
          rule_id: attempt.ruleId ?? null,
          match_id: attempt.matchId ?? null,
          created_at: clock.now().getTime(),
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return view(row);
    },

    async list(orgId: number, filter: AttemptFilter & { offset: number; limit: number }) {
      const { total } = await filtered(orgId, filter)
        .select((eb) => eb.fn.countAll<number>().as('total'))
        .executeTakeFirstOrThrow();
      return { results: (await listRows(orgId, filter)).map(view), total: Number(total) };
    },
  };
}

export type AttemptLog = ReturnType<typeof createAttemptLog>;
