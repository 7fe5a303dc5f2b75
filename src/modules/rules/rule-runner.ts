import { sql, type Kysely, type Transaction } from 'kysely';
import { claimable } from '../../db/claim.ts';
import { isStatementTimeout } from '../../db/pg.ts';
import type { Database } from '../../db/schema.ts';
import type { JobQueue } from '../../jobs/job-queue.ts';
import type { WorkerPresence } from '../../jobs/worker-presence.ts';
import { HOUR_MS } from '../../lib/clock.ts';
import { findSource, sourceCatalog, type Hit, type MatchResult, type SourceContext, type SourceDefinition } from '../sources/index.ts';
import { completeAsyncRunJob, type AsyncRun } from './jobs/complete-async-run.job.ts';
import { effectiveHours, type RuleRow } from './rule.service.ts';

/** Hits kept per match; the match's total still counts them all. */
export const MAX_STORED_HITS = 10_000;
/**
 * Due rules a worker claims at once. Rules of a source that matches many rules in one pass
 * over new data (the messenger percolator) are claimed in large batches, each batch one pass;
 * the others, run one by one, in small batches that several workers share out.
 */
const BATCH_OF_MATCHED_TOGETHER = 5_000;
const BATCH_OF_RUN_ALONE = 50;

/** Thrown inside a run's result transaction when another worker has taken the run over. */
class RunTakenOver extends Error {}

/** A run whose matching PostgreSQL cancelled at the statement timeout on every try. */
class RunTimedOut extends Error {}

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

/** Tries of a rule's matching that PostgreSQL cancelled at the statement timeout. */
const TIMEOUT_ATTEMPTS = 2;

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
 * the key does nothing and that scheduler moves on. A run whose worker died before it recorded
 * anything is taken over by the next worker that reaches its key. The match, its hits, the
 * rule's counters, its new last_run and due_at and the notifications to send are written in
 * one transaction, only while the run is still this worker's; the notifications are an outbox
 * that the dispatcher delivers, so a crash after the commit loses nothing.
 *
 * The hourly tick does not read every rule: workers claim due rules (due_at <= the window end)
 * in batches, each rule once per window, so several workers share one tick and a dead worker's
 * batch is claimed again by the others.
 */
export function createRuleRunner(deps: {
  context: SourceContext;
  /** Where the rule's own queries run (Store.ruleRuns: PostgreSQL's rule-run statement timeout). */
  ruleRuns?: SourceContext['db'];
  jobs: JobQueue;
  presence: WorkerPresence;
}) {
  const { context, jobs, presence } = deps;
  const { db, clock } = context;
  const matchContext: SourceContext = { ...context, db: deps.ruleRuns ?? db };

  /**
   * A source's matching, tried again once when PostgreSQL cancelled it at the statement timeout
   * (a busy moment, a cold cache); a second timeout fails the run with a reason that says so.
   */
  async function withTimeoutRetry<T>(match: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await match();
      } catch (error) {
        if (!isStatementTimeout(error)) throw error;
        if (attempt === TIMEOUT_ATTEMPTS) {
          throw new RunTimedOut(`the rule's query ran past the statement timeout (DRAGNET_RULE_RUN_TIMEOUT_MS) ${attempt} times; narrow the rule`, { cause: error });
        }
      }
    }
  }

  /**
   * The run of `rule`'s window ending at `until`, for this worker; null when another worker has
   * it or had it. A run that another, live worker is running hands that worker the rule's tick
   * claim for the window, so that the rule is claimed again should that worker die.
   */
  async function claimRun(rule: RuleRow, until: number): Promise<number | null> {
    await presence.ensure();
    const runKey = `${rule.id}:${until}`;
    const run = await db
      .insertInto('rule_runs')
      .values({
        org_id: rule.org_id,
        rule_id: rule.id,
        run_key: runKey,
        window_start: rule.last_run,
        window_end: until,
        status: 'running',
        claimed_by: presence.id,
        created_at: clock.now().getTime(),
      })
      .onConflict((oc) => oc.column('run_key').doNothing())
      .returning('id')
      .executeTakeFirst();
    if (run) return Number(run.id);
    // Nothing was recorded for a window whose worker died running it: run it here.
    const takenOver = await db
      .updateTable('rule_runs')
      .set({ claimed_by: presence.id, window_start: rule.last_run })
      .where('run_key', '=', runKey)
      .where('status', '=', 'running')
      .where(presence.abandoned('rule_runs.claimed_by'))
      .returning('id')
      .executeTakeFirst();
    if (takenOver) return Number(takenOver.id);
    await db
      .updateTable('alert_rules')
      .set((eb) => ({
        tick_claimed_by: eb.selectFrom('rule_runs').select('claimed_by').where('run_key', '=', runKey).where('status', '=', 'running'),
      }))
      .where('id', '=', rule.id)
      .where('tick_window', '=', until)
      .where('tick_claimed_by', '=', presence.id)
      .where((eb) => eb.exists(eb.selectFrom('rule_runs').select('id').where('run_key', '=', runKey).where('status', '=', 'running')))
      .execute();
    return null;
  }

  /**
   * Inside a run's result transaction, before anything is written: the run is still this
   * worker's (on PostgreSQL the row stays locked until the commit, so no takeover lands between).
   */
  async function holdRun(tx: Transaction<Database>, runId: number): Promise<void> {
    const held = await tx
      .updateTable('rule_runs')
      .set({ claimed_by: presence.id })
      .where('id', '=', runId)
      .where('claimed_by', '=', presence.id)
      .where('status', '=', 'running')
      .executeTakeFirst();
    if (held.numUpdatedRows === 0n) throw new RunTakenOver(`run ${runId} was taken over by another worker`);
  }

  const markFailed = (runId: number, error: unknown) =>
    db
      .updateTable('rule_runs')
      .set({ status: 'failed', error: (error as Error).message, completed_at: clock.now().getTime() })
      .where('id', '=', runId)
      .where('claimed_by', '=', presence.id)
      .execute();

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

  /** Advances last_run and due_at, never backwards (a slow run must not undo a later one). */
  const advance = (tx: Transaction<Database>, rule: RuleRow, source: SourceDefinition, until: number) =>
    tx
      .updateTable('alert_rules')
      .set({ last_run: until, due_at: until + effectiveHours(rule, source) * HOUR_MS })
      .where('id', '=', rule.id)
      .where((eb) => eb.or([eb('last_run', 'is', null), eb('last_run', '<', until)]))
      .execute();

  async function finishSync(rule: RuleRow, source: SourceDefinition, runId: number, result: MatchResult, until: number): Promise<number | null> {
    return db.transaction().execute(async (tx) => {
      await holdRun(tx, runId);
      const matchId = await recordResult(tx, rule, runId, result, null);
      await advance(tx, rule, source, until);
      return matchId;
    });
  }

  /** An async source: the window is claimed and a pending match recorded now; a job fills it. */
  async function startAsync(rule: RuleRow, source: SourceDefinition, runId: number, until: number) {
    await db.transaction().execute(async (tx) => {
      await holdRun(tx, runId);
      const now = clock.now().getTime();
      const match = await tx
        .insertInto('matches')
        .values({ org_id: rule.org_id, rule_id: rule.id, run_id: runId, status: 'pending', window_start: rule.last_run, window_end: until, created_at: now })
        .returning('id')
        .executeTakeFirstOrThrow();
      await tx.updateTable('rule_runs').set({ status: 'pending' }).where('id', '=', runId).execute();
      await advance(tx, rule, source, until);
      await jobs.enqueue(completeAsyncRunJob, `run:${runId}`, { runId, matchId: Number(match.id) }, tx);
    });
  }

  async function runOne(rule: RuleRow, source: SourceDefinition, until: number): Promise<{ ran: boolean; matchId: number | null }> {
    const runId = await claimRun(rule, until);
    if (runId === null) return { ran: false, matchId: null };
    try {
      if (source.serviceType === 'async') {
        await startAsync(rule, source, runId, until);
        return { ran: true, matchId: null };
      }
      const result = await withTimeoutRetry(() => source.match(matchContext, JSON.parse(rule.args) as Record<string, unknown>, { since: rule.last_run, until }, MAX_STORED_HITS));
      return { ran: true, matchId: await finishSync(rule, source, runId, result, until) };
    } catch (error) {
      if (error instanceof RunTakenOver) return { ran: false, matchId: null };
      // The window stays unevaluated (last_run unchanged): the next tick's run covers it.
      await markFailed(runId, error);
      throw error;
    }
  }

  /**
   * Claims up to `limit` rules of `serviceIds` that are due by `until` and not yet claimed for
   * that window (or claimed by a worker since dead), for this worker.
   */
  async function claimDue(until: number, serviceIds: number[], limit: number): Promise<RuleRow[]> {
    if (serviceIds.length === 0) return [];
    await presence.ensure();
    const due = db
      .selectFrom('alert_rules')
      .select('id')
      .where('is_deleted', '=', 0)
      .where('due_at', '<=', until)
      .where('service_id', 'in', serviceIds)
      .where((eb) =>
        eb.or([
          eb('tick_window', 'is', null),
          eb('tick_window', '<', until),
          eb.and([eb('tick_window', '=', until), presence.abandoned('alert_rules.tick_claimed_by')]),
        ]),
      )
      .orderBy('due_at')
      .orderBy('id')
      .limit(limit);
    return db
      .updateTable('alert_rules')
      .set({ tick_window: until, tick_claimed_by: presence.id })
      .where('id', 'in', claimable(due, context.engine))
      .returningAll()
      .execute();
  }

  /** Runs claimed rules of one source: one by one, or those with a last run in one pass (matchMany). */
  async function runClaimed(source: SourceDefinition, claimed: RuleRow[], until: number, report: TickReport): Promise<void> {
    const due: RuleRow[] = [];
    for (const rule of claimed) {
      // due_at is a bound the tick trusts; a rule whose effective frequency grew since is re-dated.
      const dueAt = rule.last_run === null ? 0 : Number(rule.last_run) + effectiveHours(rule, source) * HOUR_MS;
      if (dueAt <= until) due.push(rule);
      else await db.updateTable('alert_rules').set({ due_at: dueAt }).where('id', '=', rule.id).execute();
    }
    report.due += due.length;
    const batchable = source.matchMany && source.serviceType === 'sync' ? due.filter((r) => r.last_run !== null) : [];
    for (const rule of due.filter((r) => !batchable.includes(r))) {
      try {
        const outcome = await runOne(rule, source, until);
        if (outcome.ran) report.ran++;
        else report.skipped++;
        if (outcome.matchId !== null) report.matches++;
      } catch {
        report.failed++;
      }
    }
    if (batchable.length === 0) return;
    const runs = new Map<number, { rule: RuleRow; runId: number }>();
    for (const rule of batchable) {
      const runId = await claimRun(rule, until);
      if (runId === null) report.skipped++;
      else runs.set(Number(rule.id), { rule, runId });
    }
    if (runs.size === 0) return;
    let results: Awaited<ReturnType<NonNullable<SourceDefinition['matchMany']>>>;
    try {
      results = await withTimeoutRetry(() =>
        source.matchMany!(
          matchContext,
          [...runs.values()].map(({ rule }) => ({ ruleId: Number(rule.id), args: JSON.parse(rule.args) as Record<string, unknown>, since: Number(rule.last_run) })),
          until,
          MAX_STORED_HITS,
        ),
      );
    } catch (error) {
      // The pass failed for every rule in it: each run is recorded failed, its window left for the next tick.
      for (const { runId } of runs.values()) await markFailed(runId, error);
      report.failed += runs.size;
      return;
    }
    for (const { rule, runId } of runs.values()) {
      try {
        const matchId = await finishSync(rule, source, runId, results.get(Number(rule.id)) ?? { hits: [], total: 0 }, until);
        report.ran++;
        if (matchId !== null) report.matches++;
      } catch (error) {
        if (error instanceof RunTakenOver) {
          report.skipped++;
          continue;
        }
        // One rule's failure must not strand the others' claimed windows.
        await markFailed(runId, error);
        report.failed++;
      }
    }
  }

  /** The job startAsync queued: the source's matching, with progress on the pending match, and its result. */
  async function completeAsyncRun({ runId, matchId }: AsyncRun) {
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
    const result = await source.match({ ...matchContext, reportProgress }, JSON.parse(rule.args) as Record<string, unknown>, { since: run.window_start, until: Number(run.window_end) }, MAX_STORED_HITS);
    await db.transaction().execute((tx) => recordResult(tx, rule, runId, result, matchId));
  }

  return {
    recount,
    completeAsyncRun,

    /**
     * spec 3.3.1: the run at creation, over everything up to now. One past the statement timeout
     * is recorded as failed and not thrown: the rule is created all the same (an error would have
     * a client retry into a duplicate), and the scheduler runs its window again at the next tick.
     */
    async runNow(rule: RuleRow) {
      const source = findSource(Number(rule.service_id))!;
      try {
        return await runOne(rule, source, clock.now().getTime());
      } catch (error) {
        if (error instanceof RunTimedOut) return { ran: false, matchId: null };
        throw error;
      }
    },

    /**
     * The hourly evaluation of the window ending at the hour of `now`: claims due rules in
     * batches until none is left, and runs them. Cheap when there is nothing to claim, so a
     * worker calls it on every poll: rules a dead worker had claimed are run within seconds.
     */
    async tick(now: Date = clock.now()): Promise<TickReport> {
      const until = tickWindowEnd(now);
      const report: TickReport = { due: 0, ran: 0, skipped: 0, failed: 0, matches: 0 };
      const matchedTogether = sourceCatalog.filter((source) => source.matchMany && source.serviceType === 'sync');
      const runAlone = sourceCatalog.filter((source) => !matchedTogether.includes(source));
      for (const [sources, limit] of [[matchedTogether, BATCH_OF_MATCHED_TOGETHER], [runAlone, BATCH_OF_RUN_ALONE]] as const) {
        for (let claimed; (claimed = await claimDue(until, sources.map((s) => s.id), limit)).length > 0; ) {
          const bySource = new Map<number, RuleRow[]>();
          for (const rule of claimed) bySource.set(Number(rule.service_id), [...(bySource.get(Number(rule.service_id)) ?? []), rule]);
          for (const [serviceId, rules] of bySource) await runClaimed(findSource(serviceId)!, rules, until, report);
        }
      }
      return report;
    },
  };
}

export type RuleRunner = ReturnType<typeof createRuleRunner>;
