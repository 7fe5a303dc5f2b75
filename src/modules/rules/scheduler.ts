import type { JobQueue } from '../../jobs/job-queue.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Metrics } from '../../lib/metrics.ts';
import type { Notifier } from './notifier.ts';
import { tickWindowEnd, type RuleRunner } from './rule-runner.ts';

export interface SchedulerOptions {
  /** How often to look for a new hour, pending notifications and jobs. */
  pollMs: number;
  log: (message: string, error?: unknown) => void;
}

/**
 * The in-process scheduler and worker: once per hour (and at start, to catch up) it evaluates
 * due rules; every poll it delivers pending notifications and runs due jobs. Any number of
 * processes may run it against one store: run keys, notification and job claims keep each
 * piece of work to one of them.
 */
export function startScheduler(deps: { runner: RuleRunner; notifier: Notifier; jobs: JobQueue; clock: Clock; metrics: Metrics }, options: SchedulerOptions) {
  let lastHour: number | null = null;
  let busy: Promise<void> = Promise.resolve();
  let stopped = false;

  const cycle = async () => {
    const hour = tickWindowEnd(deps.clock.now());
    if (hour !== lastHour) {
      lastHour = hour;
      const report = await deps.runner.tick(deps.clock.now());
      deps.metrics.ruleRuns({ matched: report.matches, empty: report.ran - report.matches, failed: report.failed, skipped: report.skipped });
      if (report.due) options.log(`rules tick: ${report.ran} ran, ${report.skipped} already done elsewhere, ${report.matches} new matches`);
    }
    while ((await deps.jobs.runDue()) > 0 && !stopped);
    while ((await deps.notifier.dispatchPending()) > 0 && !stopped);
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
