import type { JobQueue } from '../../jobs/job-queue.ts';
import { HOUR_MS, type Clock } from '../../lib/clock.ts';
import type { Metrics } from '../../lib/metrics.ts';
import type { Notifier } from './notifier.ts';
import type { RuleRunner } from './rule-runner.ts';

export interface SchedulerOptions {
  /** How often to look for due rules, jobs and pending notifications. */
  pollMs: number;
  log: (message: string, error?: unknown) => void;
}

/**
 * The in-process scheduler and worker: every poll it claims rules due in the current hour's
 * window (nearly always none: each rule is claimed once per window, by one worker), runs due
 * jobs and delivers pending notifications. Any number of processes may run it against one
 * store: rule, run, job and notification claims keep each piece of work to one of them, and a
 * worker that dies leaves its claims to the others (src/jobs/worker-presence.ts).
 */
export function startScheduler(
  deps: { runner: RuleRunner; notifier: Notifier; jobs: JobQueue; clock: Clock; metrics: Metrics; pruneSearchHistory: (now: Date) => Promise<number> },
  options: SchedulerOptions,
) {
  let busy: Promise<void> = Promise.resolve();
  let stopped = false;
  let prunedAt = -Infinity;

  const cycle = async () => {
    const report = await deps.runner.tick(deps.clock.now());
    if (report.due) {
      deps.metrics.ruleRuns({ matched: report.matches, empty: report.ran - report.matches, failed: report.failed, skipped: report.skipped });
      options.log(`rules tick: ${report.ran} ran, ${report.skipped} already done elsewhere, ${report.matches} new matches`);
    }
    while ((await deps.jobs.runDue()) > 0 && !stopped);
    while ((await deps.notifier.dispatchPending()) > 0 && !stopped);
    // Housekeeping, hourly: a search history past its retention (one delete; with
    // several workers, each runs it and all but the first find nothing).
    const now = deps.clock.now();
    if (now.getTime() - prunedAt >= HOUR_MS) {
      prunedAt = now.getTime();
      const pruned = await deps.pruneSearchHistory(now);
      if (pruned) options.log(`search history: ${pruned} searches past their retention removed`);
    }
  };

  const timer = setInterval(() => {
    busy = busy.then(cycle).catch((error) => options.log('scheduler cycle failed', error));
  }, options.pollMs);
  busy = busy.then(cycle).catch((error) => options.log('scheduler cycle failed', error));

  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await busy;
    },
  };
}
