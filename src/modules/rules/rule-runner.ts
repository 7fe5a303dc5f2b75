import type { Transaction } from 'kysely';
import { isStatementTimeout } from '../../db/pg.ts';
import type { Database } from '../../db/schema.ts';
import type { JobQueue } from '../../jobs/job-queue.ts';
import type { WorkerPresence } from '../../jobs/worker-presence.ts';
import { HOUR_MS } from '../../lib/clock.ts';
import { AppError, conflict } from '../../lib/errors.ts';
import {
  findSource,
  sourceCatalog,
  type Hit,
  type MatchResult,
  type MatchWindow,
  type SourceContext,
  type SourceDefinition,
} from '../sources/index.ts';
import { completeAsyncRunJob, type AsyncRun } from './jobs/complete-async-run.job.ts';
import type { RuleRepository, RuleRow } from './rule.repository.ts';
import { effectiveHours } from './rule.service.ts';
import type { RunRepository } from './run.repository.ts';

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

/** Thrown inside a run's result transaction when another run moved the rule's last_run first. */
class WindowCoveredElsewhere extends Error {}

/** A run a person asked for that ran past the statement timeout: theirs to narrow or retry, not a 500. */
const unavailableIfTimedOut = (error: unknown): unknown =>
  error instanceof RunTimedOut ? new AppError('service_unavailable', error.message) : error;

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
        throw new RunTimedOut(
          `the rule's query ran past the statement timeout (DRAGNET_RULE_RUN_TIMEOUT_MS) ${attempt} times; narrow the rule`,
          { cause: error },
        );
      }
    }
  }
}

/** Channels a notification of this rule goes to (spec 6: every attached channel). */
async function channelsOf(
  rules: RuleRepository,
  rule: RuleRow,
  tx: Transaction<Database>,
): Promise<('email' | 'webhook' | 'siem')[]> {
  const channels: ('email' | 'webhook' | 'siem')[] = [];
  if ((await rules.hasRecipient(Number(rule.id), tx)) && rule.email_template_id !== null) channels.push('email');
  if (rule.webhook_id !== null) channels.push('webhook');
  // One outbox row for all the rule's SIEM targets (docs/siem.md).
  if (await rules.hasSiemTarget(Number(rule.id), tx)) channels.push('siem');
  return channels;
}

/**
 * Stores a finished run's hits as a match (or nothing, for an empty run) and queues
 * notifications; `existingMatchId` is an async run's placeholder match, filled in here.
 */
async function recordResult(
  deps: { rules: RuleRepository; runs: RunRepository; now: number },
  run: { rule: RuleRow; runId: number; result: MatchResult; existingMatchId: number | null },
  tx: Transaction<Database>,
): Promise<number | null> {
  const { rules, runs, now } = deps;
  const { rule, runId, result, existingMatchId } = run;
  const ruleId = Number(rule.id);
  const window = await runs.window(runId, tx);
  if (result.hits.length === 0) {
    // spec 3.3.4: an empty run records nothing (an async one's placeholder match goes too).
    if (existingMatchId !== null) await runs.deleteMatch(existingMatchId, tx);
    await runs.markEmpty(runId, now, tx);
    return null;
  }
  const exclusions = await rules.exclusions(ruleId, tx);
  const stored = result.hits
    .slice(0, MAX_STORED_HITS)
    .map((hit) => ({ ...hit, excluded: isExcluded(hit, exclusions) }));
  const excluded = stored.filter((hit) => hit.excluded).length;
  const counts = {
    total_hits: Math.max(result.total, stored.length),
    stored_hits: stored.length,
    excluded_hits: excluded,
    completed_at: now,
  };
  const matchId =
    existingMatchId ??
    (await runs.insertMatch(
      {
        ...counts,
        status: 'complete',
        org_id: rule.org_id,
        rule_id: rule.id,
        run_id: runId,
        window_start: window.window_start,
        window_end: window.window_end,
        created_at: now,
      },
      tx,
    ));
  if (existingMatchId !== null) await runs.completeMatch(matchId, counts, tx);
  await runs.insertHits({ matchId, ruleId }, stored, tx);
  await runs.recount(ruleId, tx);
  await runs.markCompleted(runId, { hits: stored.length, now }, tx);
  // spec 3.3.6: notify only when the run has at least one non-excluded new hit.
  if (excluded < stored.length) {
    const channels = await channelsOf(rules, rule, tx);
    if (channels.length) await runs.queueNotifications({ orgId: rule.org_id, ruleId, matchId, now }, channels, tx);
  }
  return matchId;
}

interface RunStepDeps {
  rules: RuleRepository;
  runs: RunRepository;
  jobs: JobQueue;
  presence: WorkerPresence;
  clock: SourceContext['clock'];
}

/** One run's steps: claiming its window, and recording its outcome while this worker holds it. */
function createRunSteps(deps: RunStepDeps) {
  const { rules, runs, jobs, presence, clock } = deps;
  const record = (run: Parameters<typeof recordResult>[1], tx: Transaction<Database>) =>
    recordResult({ rules, runs, now: clock.now().getTime() }, run, tx);

  /**
   * The run of `rule`'s window ending at `until`, for this worker; null when another worker has
   * it or had it. A run that another, live worker is running hands that worker the rule's tick
   * claim for the window, so that the rule is claimed again should that worker die.
   */
  async function claimRun(rule: RuleRow, until: number): Promise<number | null> {
    await presence.ensure();
    const runKey = `${rule.id}:${until}`;
    const now = clock.now().getTime();
    const started = await runs.start({
      orgId: rule.org_id,
      ruleId: rule.id,
      runKey,
      windowStart: rule.last_run,
      windowEnd: until,
      now,
    });
    if (started !== null) await runs.closeSuperseded({ ruleId: rule.id, windowEnd: until, now });
    // Nothing was recorded for a window whose worker died running it: run it here.
    const runId = started ?? (await runs.takeOverAbandoned(runKey, rule.last_run));
    if (runId === null) await rules.passTickClaimToRunner(rule.id, until, runKey);
    return runId;
  }

  /** Inside a run's result transaction, before anything is written: the run is still this worker's. */
  async function holdRun(tx: Transaction<Database>, runId: number): Promise<void> {
    if (!(await runs.hold(runId, tx))) throw new RunTakenOver(`run ${runId} was taken over by another worker`);
  }

  const markFailed = (runId: number, error: unknown) =>
    runs.markFailed(runId, (error as Error).message, clock.now().getTime());

  async function advance(tx: Transaction<Database>, rule: RuleRow, source: SourceDefinition, until: number) {
    const window = { from: rule.last_run, until, dueAt: until + effectiveHours(rule, source) * HOUR_MS };
    if (!(await rules.advance(rule.id, window, tx)))
      throw new WindowCoveredElsewhere(`another run of rule ${rule.id} covered part of this window first`);
  }

  async function finishSync(
    rule: RuleRow,
    source: SourceDefinition,
    runId: number,
    result: MatchResult,
    until: number,
  ): Promise<number | null> {
    return runs.transaction(async (tx) => {
      await holdRun(tx, runId);
      await advance(tx, rule, source, until);
      return record({ rule, runId, result, existingMatchId: null }, tx);
    });
  }

  /** Claims up to `limit` due rules of `serviceIds` for this worker (RuleRepository.claimDue). */
  async function claimDue(until: number, serviceIds: number[], limit: number): Promise<RuleRow[]> {
    if (serviceIds.length === 0) return [];
    await presence.ensure();
    return rules.claimDue(until, serviceIds, limit);
  }

  /** An async source: the window is claimed and a pending match recorded now; a job fills it. */
  async function startAsync(rule: RuleRow, source: SourceDefinition, runId: number, until: number) {
    await runs.transaction(async (tx) => {
      await holdRun(tx, runId);
      const now = clock.now().getTime();
      const matchId = await runs.insertMatch(
        {
          org_id: rule.org_id,
          rule_id: rule.id,
          run_id: runId,
          status: 'pending',
          window_start: rule.last_run,
          window_end: until,
          created_at: now,
        },
        tx,
      );
      await runs.markPending(runId, tx);
      await advance(tx, rule, source, until);
      await jobs.enqueue(completeAsyncRunJob, `run:${runId}`, { runId, matchId }, tx);
    });
  }

  return { record, claimRun, markFailed, finishSync, startAsync, claimDue };
}

type RunSteps = ReturnType<typeof createRunSteps>;

/** Rules of a matchMany source, matched in one pass over the data new since each one's last run. */
async function runMatchedTogether(
  pass: { steps: RunSteps; matchContext: SourceContext; source: SourceDefinition; until: number; report: TickReport },
  batchable: RuleRow[],
): Promise<void> {
  const { steps, matchContext, source, until, report } = pass;
  const claimedRuns = new Map<number, { rule: RuleRow; runId: number }>();
  for (const rule of batchable) {
    const runId = await steps.claimRun(rule, until);
    if (runId === null) report.skipped++;
    else claimedRuns.set(Number(rule.id), { rule, runId });
  }
  if (claimedRuns.size === 0) return;
  let results: Awaited<ReturnType<NonNullable<SourceDefinition['matchMany']>>>;
  try {
    results = await withTimeoutRetry(() =>
      source.matchMany!(
        matchContext,
        [...claimedRuns.values()].map(({ rule }) => ({
          ruleId: Number(rule.id),
          args: JSON.parse(rule.args) as Record<string, unknown>,
          since: Number(rule.last_run),
        })),
        until,
        MAX_STORED_HITS,
      ),
    );
  } catch (error) {
    // The pass failed for every rule in it: each run is recorded failed, its window left for the next tick.
    for (const { runId } of claimedRuns.values()) await steps.markFailed(runId, error);
    report.failed += claimedRuns.size;
    return;
  }
  for (const { rule, runId } of claimedRuns.values()) {
    try {
      const matchId = await steps.finishSync(
        rule,
        source,
        runId,
        results.get(Number(rule.id)) ?? { hits: [], total: 0 },
        until,
      );
      report.ran++;
      if (matchId !== null) report.matches++;
    } catch (error) {
      if (error instanceof RunTakenOver) {
        report.skipped++;
        continue;
      }
      // One rule's failure must not strand the others' claimed windows.
      await steps.markFailed(runId, error);
      report.failed++;
    }
  }
}

/** The job startAsync queued: the source's matching, with progress on the pending match, and its result. */
async function completeAsyncRun(
  deps: { steps: RunSteps; rules: RuleRepository; runs: RunRepository; matchContext: SourceContext },
  { runId, matchId }: AsyncRun,
) {
  const { steps, rules, runs, matchContext } = deps;
  const run = await runs.findById(runId);
  const rule = await rules.findById(run.rule_id);
  const source = findSource(Number(rule.service_id))!;
  let reported = 0;
  const reportProgress = async (done: number, total: number, unit: string) => {
    // At most one write a second: a scan reports often, the match row is read rarely.
    const now = matchContext.clock.now().getTime();
    if (now - reported < 1000 && done < total) return;
    reported = now;
    await runs.setProgress(matchId, { done, total, unit });
  };
  const result = await source.match(
    { ...matchContext, reportProgress },
    JSON.parse(rule.args) as Record<string, unknown>,
    { since: run.window_start, until: Number(run.window_end) },
    MAX_STORED_HITS,
  );
  await runs.transaction((tx) => steps.record({ rule, runId, result, existingMatchId: matchId }, tx));
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
  rules: RuleRepository;
  runs: RunRepository;
}) {
  const { context, jobs, rules, runs } = deps;
  const { clock } = context;
  const matchContext: SourceContext = { ...context, db: deps.ruleRuns ?? context.db };
  const steps = createRunSteps({ rules, runs, jobs, presence: deps.presence, clock });
  const { claimRun, markFailed, finishSync, startAsync } = steps;

  async function runOne(
    rule: RuleRow,
    source: SourceDefinition,
    until: number,
  ): Promise<{ ran: boolean; matchId: number | null }> {
    const runId = await claimRun(rule, until);
    if (runId === null) return { ran: false, matchId: null };
    try {
      if (source.serviceType === 'async') {
        await startAsync(rule, source, runId, until);
        return { ran: true, matchId: null };
      }
      const result = await withTimeoutRetry(() =>
        source.match(
          matchContext,
          JSON.parse(rule.args) as Record<string, unknown>,
          { since: rule.last_run, until },
          MAX_STORED_HITS,
        ),
      );
      return { ran: true, matchId: await finishSync(rule, source, runId, result, until) };
    } catch (error) {
      if (error instanceof RunTakenOver) return { ran: false, matchId: null };
      // The window stays unevaluated (last_run unchanged): the next tick's run covers it.
      await markFailed(runId, error);
      throw error;
    }
  }

  /** Runs claimed rules of one source: one by one, or those with a last run in one pass (matchMany). */
  async function runClaimed(
    source: SourceDefinition,
    claimed: RuleRow[],
    until: number,
    report: TickReport,
  ): Promise<void> {
    const due: RuleRow[] = [];
    for (const rule of claimed) {
      // due_at is a bound the tick trusts; a rule whose effective frequency grew since is re-dated.
      const dueAt = rule.last_run === null ? 0 : Number(rule.last_run) + effectiveHours(rule, source) * HOUR_MS;
      if (dueAt <= until) due.push(rule);
      else await rules.setDueAt(rule.id, dueAt);
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
    if (batchable.length) await runMatchedTogether({ steps, matchContext, source, until, report }, batchable);
  }

  return {
    completeAsyncRun: (run: AsyncRun) => completeAsyncRun({ steps, rules, runs, matchContext }, run),
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
     * "Run now" (docs/api.md "Pause, run now, preview"): the window (last_run, now] through the
     * same run as the scheduler's, so its run key, match and notifications are a scheduled run's.
     * A run that lost its window to another (or timed out) is the caller's to retry: a 409 or 503.
     */
    async runOnDemand(rule: RuleRow): Promise<{ ran: boolean; matchId: number | null; windowEnd: number }> {
      const source = findSource(Number(rule.service_id))!;
      const until = clock.now().getTime();
      try {
        return { ...(await runOne(rule, source, until)), windowEnd: until };
      } catch (error) {
        if (error instanceof WindowCoveredElsewhere)
          throw conflict('the scheduler ran this rule meanwhile; its last run moved, so run it again');
        throw unavailableIfTimedOut(error);
      }
    },

    /**
     * A rule's matching over a past window with nothing stored or sent ("preview"), on the same
     * connection (and PostgreSQL statement timeout) as runs.
     */
    preview: (source: SourceDefinition, args: Record<string, unknown>, window: MatchWindow, limit: number) =>
      withTimeoutRetry(() => source.match(matchContext, args, window, limit)).catch((error: unknown) => {
        throw unavailableIfTimedOut(error);
      }),

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
      for (const [sources, limit] of [
        [matchedTogether, BATCH_OF_MATCHED_TOGETHER],
        [runAlone, BATCH_OF_RUN_ALONE],
      ] as const) {
        for (
          let claimed;
          (claimed = await steps.claimDue(
            until,
            sources.map((s) => s.id),
            limit,
          )).length > 0;
        ) {
          const bySource = new Map<number, RuleRow[]>();
          for (const rule of claimed)
            bySource.set(Number(rule.service_id), [...(bySource.get(Number(rule.service_id)) ?? []), rule]);
          for (const [serviceId, ofSource] of bySource)
            await runClaimed(findSource(serviceId)!, ofSource, until, report);
        }
      }
      return report;
    },
  };
}

export type RuleRunner = ReturnType<typeof createRuleRunner>;
