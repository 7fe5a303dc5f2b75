import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Metrics } from '../../lib/metrics.ts';
import type { OutboundHttp } from '../../lib/outbound/index.ts';
import type { SourceContext } from '../sources/index.ts';
import { createCollectorStateRepository } from './collector-state.repository.ts';
import type { ConfiguredCollector } from './collectors-file.ts';
import { isoDateOrNull as iso } from '../../lib/iso-date.ts';

export interface CollectorStatus {
  name: string;
  source: string | null;
  description: string;
  enabled: boolean;
  interval_seconds: number;
  running: boolean;
  next_run_at: string | null;
  last_run_at: string | null;
  last_success_at: string | null;
  last_error: string | null;
  last_error_at: string | null;
  consecutive_failures: number;
  runs: number;
  items_last_run: number | null;
  items_total: number;
  cursor: unknown;
}

export interface CollectorRunReport {
  name: string;
  /** ran: finished; failed: threw; busy: another process holds it; stopped: aborted by shutdown. */
  outcome: 'ran' | 'failed' | 'busy' | 'stopped';
  items: number;
  error?: string;
}

/**
 * Runs collectors on their schedule and keeps their state in `collector_state`: the cursor a run
 * saves as it goes (a killed run resumes from the last save), a lease so that one process at a
 * time runs a collector, and the health an operator reads (`dragnet collectors`, GET
 * /service/collectors/). A failed run is retried after a backoff that doubles per consecutive
 * failure.
 */
export function createCollectorRunner(deps: {
  db: Kysely<Database>;
  clock: Clock;
  context: SourceContext;
  collectors: ConfiguredCollector[];
  metrics: Metrics;
  http: OutboundHttp;
}) {
  const { clock, context, collectors } = deps;
  const now = () => clock.now().getTime();
  const collectorState = createCollectorStateRepository({ db: deps.db, clock });

  async function runOne(
    entry: ConfiguredCollector,
    signal: AbortSignal,
    seenRuns: number | null,
  ): Promise<CollectorRunReport> {
    const { collector } = entry;
    const name = collector.name;
    if (!(await collectorState.claim(name, seenRuns))) return { name, outcome: 'busy', items: 0 };
    const cursor = await collectorState.cursor(name);
    const startedAt = now();
    try {
      const outcome = await collector.run(context, {
        settings: entry.settings,
        cursor,
        saveCursor: (next) => collectorState.saveCursor(name, next),
        signal,
        http: deps.http,
        log: (message) => process.stderr.write(`collector ${name}: ${message}\n`),
      });
      if (outcome.ingested)
        for (const { ingester, tally } of outcome.ingested) deps.metrics.ingested(ingester, 'collector', tally);
      else if (entry.sourceName) deps.metrics.ingested(entry.sourceName, 'collector', { added: outcome.items });
      await collectorState.recordSuccess(name, {
        cursor: outcome.cursor,
        items: outcome.items,
        startedAt,
        intervalSeconds: entry.intervalSeconds,
      });
      return { name, outcome: 'ran', items: outcome.items };
    } catch (error) {
      if (signal.aborted) {
        // Shutting down is not a failure: the saved cursor stands and the next process goes on.
        await collectorState.release(name);
        return { name, outcome: 'stopped', items: 0 };
      }
      const message = error instanceof Error ? error.message : String(error);
      await collectorState.recordFailure(name, { message, startedAt, intervalSeconds: entry.intervalSeconds });
      return { name, outcome: 'failed', items: 0, error: message };
    }
  }

  const find = (name: string) => collectors.find((entry) => entry.collector.name === name);

  return {
    collectors,

    async status(): Promise<CollectorStatus[]> {
      const rows = await collectorState.all();
      const states = new Map(rows.map((row) => [row.name, row]));
      const at = now();
      return collectors.map((entry) => {
        const state = states.get(entry.collector.name);
        return {
          name: entry.collector.name,
          source: entry.sourceName,
          description: entry.collector.description,
          enabled: entry.enabled,
          interval_seconds: entry.intervalSeconds,
          running: state?.claimed_until != null && Number(state.claimed_until) > at,
          next_run_at: entry.enabled ? iso(state?.next_run_at ?? at) : null,
          last_run_at: iso(state?.last_run_at ?? null),
          last_success_at: iso(state?.last_success_at ?? null),
          last_error: state?.last_error ?? null,
          last_error_at: iso(state?.last_error_at ?? null),
          consecutive_failures: Number(state?.consecutive_failures ?? 0),
          runs: Number(state?.runs ?? 0),
          items_last_run: state?.items_last_run ?? null,
          items_total: Number(state?.items_total ?? 0),
          cursor: state?.cursor ? JSON.parse(state.cursor) : null,
        };
      });
    },

    /** Runs the named collectors once now, whatever their schedule (`dragnet collectors run`). */
    async runNow(names: string[], signal: AbortSignal = new AbortController().signal): Promise<CollectorRunReport[]> {
      const reports: CollectorRunReport[] = [];
      for (const name of names) {
        const entry = find(name);
        if (!entry)
          throw new Error(
            `no collector named "${name}" (known: ${collectors.map((c) => c.collector.name).join(', ')})`,
          );
        if (!entry.enabled) throw new Error(`collector "${name}" is not enabled: turn it on in the collectors file`);
        reports.push(await runOne(entry, signal, null));
      }
      return reports;
    },

    /**
     * The worker's loop: every poll, each enabled collector that is due and not already running
     * here starts; collectors run side by side, so a long CT log read does not hold up the inbox.
     */
    start(options: { pollMs: number; log: (message: string, error?: unknown) => void }) {
      const controller = new AbortController();
      const running = new Map<string, Promise<void>>();
      const poll = async () => {
        const rows = await collectorState.schedules();
        const states = new Map(rows.map((row) => [row.name, row]));
        // An interval shortened in the collectors file applies at once, unless backing off.
        const dueAt = (entry: ConfiguredCollector) => {
          const state = states.get(entry.collector.name);
          if (!state) return 0;
          const scheduled = Number(state.next_run_at);
          if (Number(state.consecutive_failures) > 0 || state.last_run_at === null) return scheduled;
          return Math.min(scheduled, Number(state.last_run_at) + entry.intervalSeconds * 1000);
        };
        for (const entry of collectors) {
          const name = entry.collector.name;
          if (!entry.enabled || running.has(name) || controller.signal.aborted) continue;
          if (dueAt(entry) > now()) continue;
          const run = runOne(entry, controller.signal, Number(states.get(name)?.runs ?? 0))
            .then((report) => {
              if (report.outcome === 'failed') options.log(`collector ${name} failed: ${report.error}`);
            })
            .catch((error) => options.log(`collector ${name} could not run`, error))
            .finally(() => running.delete(name));
          running.set(name, run);
        }
      };
      let polling: Promise<void> = Promise.resolve();
      const tick = () => {
        polling = polling.then(poll).catch((error) => options.log('collectors poll failed', error));
      };
      const timer = setInterval(tick, options.pollMs);
      tick();
      return {
        async stop() {
          clearInterval(timer);
          controller.abort();
          await polling;
          await Promise.all(running.values());
        },
      };
    },
  };
}

export type CollectorRunner = ReturnType<typeof createCollectorRunner>;
