import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { JobQueue } from '../../jobs/job-queue.ts';
import { HOUR_MS } from '../../lib/clock.ts';
import { findSource, type Hit, type MatchResult, type SourceContext, type SourceDefinition } from '../sources/index.ts';
import { effectiveHours, type RuleRow } from './rule.service.ts';

/** Hits kept per match; the match's total still counts them all. */
export const MAX_STORED_HITS = 10_000;
const ASYNC_JOB = 'rules.complete-async-run';

interface ExclusionRow {
  field: string;
  value: string;
}

/**
 * The exclusion field that names one hit (its key, shown as `hit_key` in the hits list) rather
 * than a result field: "exclude this hit" in the dashboard. Compared exactly, unlike values.
 */
export const HIT_KEY_FIELD = 'hit_key';

export const isExcluded = (hit: Hit, exclusions: ExclusionRow[]): boolean =>
  exclusions.some((e) => {
    if (e.field === HIT_KEY_FIELD) return hit.key === e.value;
    const value = hit.data[e.field];
    return value !== null && value !== undefined && String(value).toLowerCase() === e.value.toLowerCase();
  });

/** The end of a scheduled window: the start of the hour, so every scheduler agrees on it. */
export const tickWindowEnd = (now: Date): number => now.getTime() - (now.getTime() % HOUR_MS);

export interface TickReport {
  due: number;
  ran: number;
  skipped: number;
  failed: number;
  matches: number;
}

/**
 * Runs of monitoring rules (spec 3.3). A run evaluates the window (last_run, until] of one rule.
 * Its run key "<rule>:<until>" is unique in the store, so a window is evaluated once even when
 * two schedulers (or a tick beside a crashed process's restart) reach it: the second insert of
 * the key fails and that scheduler moves on. The match, its hits, the rule's counters, its new
 * last_run and the notifications to send are written in one transaction; the notifications
 * are an outbox that the dispatcher delivers, so a crash after the commit loses nothing.
 */
export function createRuleRunner(deps: { context: SourceContext; jobs: JobQueue }) {
  const { context, jobs } = deps;
  const { db, clock } = context;

  async function claimRun(rule: RuleRow, until: number, executor: Kysely<Database> | Transaction<Database> = db): Promise<number | null> {
    const run = await executor
      .insertInto('rule_runs')
      .values({
        org_id: rule.org_id,
        rule_id: rule.id,
        run_key: `${rule.id}:${until}`,
        window_start: rule.last_run,
        window_end: until,
        status: 'running',
        created_at: clock.now().getTime(),
      })
      .onConflict((oc) => oc.column('run_key').doNothing())
      .returning('id')
      .executeTakeFirst();
    return run ? Number(run.id) : null;
  }

  const markFailed = (runId: number, error: unknown) =>
    db.updateTable('rule_runs').set({ status: 'failed', error: (error as Error).message, completed_at: clock.now().getTime() }).where('id', '=', runId).execute();

  async function exclusionsOf(ruleId: number, executor: Kysely<Database> | Transaction<Database> = db) {
    return executor.selectFrom('exclusions').select(['field', 'value']).where('rule_id', '=', ruleId).execute();
  }

  /** Channels a notification of this rule goes to (spec 6: every attached channel). */
  async function channelsOf(rule: RuleRow, tx: Transaction<Database>): Promise<('email' | 'webhook')[]> {
    const channels: ('email' | 'webhook')[] = [];
    const recipient = await tx.selectFrom('alert_rule_recipients').select('recipient_id').where('rule_id', '=', rule.id).executeTakeFirst();
    if (recipient && rule.email_template_id !== null) channels.push('email');
    if (rule.webhook_id !== null) channels.push('webhook');
    return channels;
  }

  /** Refreshes the rule's counters from its stored hits (they count non-excluded results). */
  async function recount(ruleId: number, tx: Kysely<Database> | Transaction<Database>) {
    await sql`update matches set excluded_hits = (select count(*) from match_hits h where h.match_id = matches.id and h.is_excluded = 1)
      where rule_id = ${ruleId}`.execute(tx);
    await sql`update alert_rules set
        total_matches_count = (select count(*) from match_hits h join matches m on m.id = h.match_id
          where h.rule_id = ${ruleId} and h.is_excluded = 0 and m.status = 'complete'),
        total_alerts_count = (select count(*) from matches m where m.rule_id = ${ruleId} and m.status = 'complete'
          and exists (select 1 from match_hits h where h.match_id = m.id and h.is_excluded = 0))
      where id = ${ruleId}`.execute(tx);
  }

  /** Stores a finished run's hits as a match (or nothing, for an empty run) and queues notifications. */
  async function recordResult(tx: Transaction<Database>, rule: RuleRow, runId: number, result: MatchResult, existingMatchId: number | null): Promise<number | null> {
    const now = clock.now().getTime();
    const run = await tx.selectFrom('rule_runs').select(['window_start', 'window_end']).where('id', '=', runId).executeTakeFirstOrThrow();
    if (result.hits.length === 0) {
      // spec 3.3.4: an empty run records nothing (an async one's placeholder match goes too).
      if (existingMatchId !== null) await tx.deleteFrom('matches').where('id', '=', existingMatchId).execute();
      await tx.updateTable('rule_runs').set({ status: 'empty', completed_at: now }).where('id', '=', runId).execute();
      return null;
    }
    const exclusions = await exclusionsOf(Number(rule.id), tx);
    const stored = result.hits.slice(0, MAX_STORED_HITS);
    const flags = stored.map((hit) => isExcluded(hit, exclusions));
    const excluded = flags.filter(Boolean).length;
    let matchId = existingMatchId;
    const values = {
      status: 'complete',
      total_hits: Math.max(result.total, stored.length),
      stored_hits: stored.length,
      excluded_hits: excluded,
      completed_at: now,
    };
    if (matchId === null) {
      const inserted = await tx
        .insertInto('matches')
        .values({ ...values, org_id: rule.org_id, rule_id: rule.id, run_id: runId, window_start: run.window_start, window_end: run.window_end, created_at: now })
        .returning('id')
        .executeTakeFirstOrThrow();
      matchId = Number(inserted.id);
    } else {
      await tx.updateTable('matches').set(values).where('id', '=', matchId).execute();
    }
    for (let i = 0; i < stored.length; i += 200) {
      await tx
        .insertInto('match_hits')
        .values(
          stored.slice(i, i + 200).map((hit, j) => ({
            match_id: matchId!,
            rule_id: rule.id,
            hit_key: hit.key,
            hit_date: hit.date,
            data: JSON.stringify(hit.data),
            is_excluded: flags[i + j] ? 1 : 0,
          })),
        )
        .execute();
    }
    await recount(Number(rule.id), tx);
    await tx.updateTable('rule_runs').set({ status: 'completed', hits: stored.length, completed_at: now }).where('id', '=', runId).execute();
    // spec 3.3.6: notify only when the run has at least one non-excluded new hit.
    if (excluded < stored.length) {
      const channels = await channelsOf(rule, tx);
      if (channels.length) {
        await tx
          .insertInto('notifications')
          .values(channels.map((channel) => ({ org_id: rule.org_id, rule_id: rule.id, match_id: matchId!, channel, status: 'pending', created_at: now })))
          .execute();
      }
    }
    return matchId;
  }

  /** Advances last_run, never backwards (a slow run must not undo a later one). */
  const advance = (tx: Transaction<Database>, ruleId: number, until: number) =>
    tx
      .updateTable('alert_rules')
      .set({ last_run: until })
      .where('id', '=', ruleId)
      .where((eb) => eb.or([eb('last_run', 'is', null), eb('last_run', '<', until)]))
      .execute();

  async function finishSync(rule: RuleRow, runId: number, result: MatchResult, until: number): Promise<number | null> {
    return db.transaction().execute(async (tx) => {
      const matchId = await recordResult(tx, rule, runId, result, null);
      await advance(tx, Number(rule.id), until);
      return matchId;
    });
  }

  /** An async source: the window is claimed and a pending match recorded now; a job fills it. */
  async function startAsync(rule: RuleRow, runId: number, until: number) {
    await db.transaction().execute(async (tx) => {
      const now = clock.now().getTime();
      const match = await tx
        .insertInto('matches')
        .values({ org_id: rule.org_id, rule_id: rule.id, run_id: runId, status: 'pending', window_start: rule.last_run, window_end: until, created_at: now })
        .returning('id')
        .executeTakeFirstOrThrow();
      await tx.updateTable('rule_runs').set({ status: 'pending' }).where('id', '=', runId).execute();
      await advance(tx, Number(rule.id), until);
      await jobs.enqueue(ASYNC_JOB, `run:${runId}`, { runId, matchId: Number(match.id) }, tx);
    });
  }

  async function runOne(rule: RuleRow, source: SourceDefinition, until: number): Promise<{ ran: boolean; matchId: number | null }> {
    const runId = await claimRun(rule, until);
    if (runId === null) return { ran: false, matchId: null };
    if (source.serviceType === 'async') {
      await startAsync(rule, runId, until);
      return { ran: true, matchId: null };
    }
    try {
      const result = await source.match(context, JSON.parse(rule.args) as Record<string, unknown>, { since: rule.last_run, until }, MAX_STORED_HITS);
      return { ran: true, matchId: await finishSync(rule, runId, result, until) };
    } catch (error) {
      // The window stays unevaluated (last_run unchanged): the next tick's run covers it.
      await markFailed(runId, error);
      throw error;
    }
  }

  jobs.define<{ runId: number; matchId: number }>({
    type: ASYNC_JOB,
    async handler({ runId, matchId }) {
      const run = await db.selectFrom('rule_runs').selectAll().where('id', '=', runId).executeTakeFirstOrThrow();
      const rule = await db.selectFrom('alert_rules').selectAll().where('id', '=', run.rule_id).executeTakeFirstOrThrow();
      const source = findSource(Number(rule.service_id))!;
      let reported = 0;
      const reportProgress = async (done: number, total: number, unit: string) => {
        // At most one write a second: a scan reports often, the match row is read rarely.
        const now = clock.now().getTime();
        if (now - reported < 1000 && done < total) return;
        reported = now;
        await db.updateTable('matches').set({ progress: JSON.stringify({ done, total, unit }) }).where('id', '=', matchId).execute();
      };
      const result = await source.match({ ...context, reportProgress }, JSON.parse(rule.args) as Record<string, unknown>, { since: run.window_start, until: Number(run.window_end) }, MAX_STORED_HITS);
      await db.transaction().execute((tx) => recordResult(tx, rule, runId, result, matchId));
    },
  });

  return {
    recount,

    /** spec 3.3.1: the run at creation, over everything up to now. */
    async runNow(rule: RuleRow) {
      const source = findSource(Number(rule.service_id))!;
      return runOne(rule, source, clock.now().getTime());
    },

    /**
     * The hourly evaluation: every active rule whose effective frequency has elapsed since its
     * last run. Rules of a source with a batch matcher (messenger) are percolated in one pass.
     */
    async tick(now: Date = clock.now()): Promise<TickReport> {
      const until = tickWindowEnd(now);
      const rules = await db.selectFrom('alert_rules').selectAll().where('is_deleted', '=', 0).orderBy('id').execute();
      const due = rules.filter((rule) => {
        const source = findSource(Number(rule.service_id));
        return source && (rule.last_run === null || until - Number(rule.last_run) >= effectiveHours(rule, source) * HOUR_MS);
      });
      const report: TickReport = { due: due.length, ran: 0, skipped: 0, failed: 0, matches: 0 };
      const bySource = new Map<number, RuleRow[]>();
      for (const rule of due) bySource.set(Number(rule.service_id), [...(bySource.get(Number(rule.service_id)) ?? []), rule]);

      for (const [serviceId, group] of bySource) {
        const source = findSource(serviceId)!;
        const batchable = source.matchMany && source.serviceType === 'sync' ? group.filter((r) => r.last_run !== null) : [];
        for (const rule of group.filter((r) => !batchable.includes(r))) {
          try {
            const outcome = await runOne(rule, source, until);
            if (outcome.ran) report.ran++;
            else report.skipped++;
            if (outcome.matchId !== null) report.matches++;
          } catch {
            report.failed++;
          }
        }
        if (batchable.length === 0) continue;
        const claimed = new Map<number, { rule: RuleRow; runId: number }>();
        for (const rule of batchable) {
          const runId = await claimRun(rule, until);
          if (runId === null) report.skipped++;
          else claimed.set(Number(rule.id), { rule, runId });
        }
        const results = await source.matchMany!(
          context,
          [...claimed.values()].map(({ rule }) => ({ ruleId: Number(rule.id), args: JSON.parse(rule.args) as Record<string, unknown>, since: Number(rule.last_run) })),
          until,
          MAX_STORED_HITS,
        );
        for (const { rule, runId } of claimed.values()) {
          try {
            const matchId = await finishSync(rule, runId, results.get(Number(rule.id)) ?? { hits: [], total: 0 }, until);
            report.ran++;
            if (matchId !== null) report.matches++;
          } catch (error) {
            // One rule's failure must not strand the others' claimed windows.
            await markFailed(runId, error);
            report.failed++;
          }
        }
      }
      return report;
    },
  };
}

export type RuleRunner = ReturnType<typeof createRuleRunner>;
