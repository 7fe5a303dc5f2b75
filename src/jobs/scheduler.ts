import { HOUR_MS, type Clock } from '../lib/clock.ts';
import type { Metrics } from '../lib/metrics.ts';
import type { JobWorker } from './job-queue.ts';

export interface SchedulerOptions {
  /** How often to look for due rules, jobs and pending notifications. */
  pollMs: number;
  log: (message: string, error?: unknown) => void;
}

/**
 * What the scheduler polls, as the composition root's container holds it. Declared here, by
 * what the loop calls, so that jobs/ needs none of the modules that do the work.
 */
interface ScheduledWork {
  /** The rule runner: claims and runs the rules due in the window ending at the hour of `now`. */
  runner: { tick(now: Date): Promise<{ due: number; ran: number; skipped: number; failed: number; matches: number }> };
  /** The notification outbox: sends a batch of pending notifications, returns how many. */
  notifier: { dispatchPending(): Promise<number> };
  jobs: Pick<JobWorker, 'runDue'>;
  clock: Clock;
  metrics: Pick<Metrics, 'ruleRuns'>;
  /** Removes searches past their retention; returns how many. */
  pruneSearchHistory(now: Date): Promise<number>;
}

/**
 * The in-process scheduler and worker: every poll it claims rules due in the current hour's
 * window (nearly always none: each rule is claimed once per window, by one worker) and runs due
 * jobs; on a loop of its own, it delivers pending notifications. Any number of processes may run
 * it against one store: rule, run, job and notification claims keep each piece of work to one of
 * them, and a worker that dies leaves its claims to the others (src/jobs/worker-presence.ts).
 */
export function startScheduler(deps: ScheduledWork, options: SchedulerOptions) {
  let stopped = false;
  let prunedAt = -Infinity;

  /**
   * `work` now and every pollMs, one at a time: a poll that finds the previous one still running
   * is skipped rather than queued behind it.
   */
  const loop = (name: string, work: () => Promise<void>) => {
    let running: Promise<void> | null = null;
    const poll = () => {
      running ??= work()
        .catch((error: unknown) => options.log(`${name} failed`, error))
        .finally(() => (running = null));
    };
    const timer = setInterval(poll, options.pollMs);
    poll();
    return async () => {
      clearInterval(timer);
      await running;
    };
  };

  const stopRules = loop('scheduler cycle', async () => {
    const report = await deps.runner.tick(deps.clock.now());
    if (report.due) {
      deps.metrics.ruleRuns({
        matched: report.matches,
        empty: report.ran - report.matches,
        failed: report.failed,
        skipped: report.skipped,
      });
      options.log(
        `rules tick: ${report.ran} ran, ${report.skipped} already done elsewhere, ${report.matches} new matches`,
      );
    }
    while ((await deps.jobs.runDue()) > 0 && !stopped);
    // Housekeeping, hourly: a search history past its retention (one delete; with
    // several workers, each runs it and all but the first find nothing).
    const now = deps.clock.now();
    if (now.getTime() - prunedAt >= HOUR_MS) {
      prunedAt = now.getTime();
      const pruned = await deps.pruneSearchHistory(now);
      if (pruned) options.log(`search history: ${pruned} searches past their retention removed`);
    }
  });
  // A delivery may take the whole delivery timeout: on the same loop, one slow receiver would
  // hold up every organization's rule runs and jobs until it answers.
  const stopDispatch = loop('notification dispatch', async () => {
    while ((await deps.notifier.dispatchPending()) > 0 && !stopped);
  });

  return {
    async stop() {
      stopped = true;
      await Promise.all([stopRules(), stopDispatch()]);
    },
  };
}
