import { createRequire } from 'node:module';
import type { Metric, Registry } from 'prom-client';
import type { ReadRouter } from '../db/read-replicas.ts';

type PromClient = typeof import('prom-client');
let promClient: PromClient | undefined;
/**
 * prom-client takes a fifth of a short `dragnet` command's start-up and only serving processes
 * use it: it is loaded on the first metric recorded or scraped (a CommonJS package, so it can
 * be loaded synchronously where it is first needed).
 */
const loadPromClient = (): PromClient => (promClient ??= createRequire(import.meta.url)('prom-client') as PromClient);

/** A queue's backlog as the store holds it: `queue` is jobs or notifications, `status` one of its states. */
export interface QueueDepth {
  queue: string;
  status: string;
  count: number;
}

/** The states each queue reports even when empty, so a dashboard shows 0 rather than no data. */
const QUEUE_STATES: Record<string, string[]> = {
  jobs: ['queued', 'running'],
  notifications: ['pending', 'sending'],
};

// Requests take a millisecond or less; searches and exports may take seconds.
export const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
// SMTP and webhook round trips over the internet, up to the 30 s transport timeouts.
const DELIVERY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

let processRegistry: Registry | undefined;

/**
 * The Node.js process metrics (CPU, memory, event-loop delay, GC) belong to the process, not to
 * one container: made once, however many containers a process builds (tests build many, and
 * each set of default metrics keeps an event-loop monitor running).
 */
function processMetrics(): Registry {
  if (!processRegistry) {
    const { Registry, collectDefaultMetrics } = loadPromClient();
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/**
 * The Prometheus metrics of one process (docs/operations.md "Metrics"). Counters count what this
 * process did; the queue depth is read from the store at scrape time, so every process of a
 * scale-out deployment reports the same shared backlog.
 */
export function createMetrics(deps: MetricsDeps) {
  let instruments: ReturnType<typeof createInstruments> | undefined;
  const use = () => (instruments ??= createInstruments(deps));

  return {
    get contentType() {
      return use().registry.contentType;
    },

    /** The exposition text: this container's metrics after the process's. */
    async render(): Promise<string> {
      return (await processMetrics().metrics()) + (await use().registry.metrics());
    },

    request(method: string, route: string, statusCode: number, seconds: number) {
      use().requestDuration.observe(method, route, statusCode, seconds);
    },

    refused(route: string, code: string) {
      use().refusals.inc({ route, code });
    },

    ruleRuns(counts: { matched: number; empty: number; failed: number; skipped: number }) {
      const { ruleRuns } = use();
      for (const [outcome, count] of Object.entries(counts)) if (count > 0) ruleRuns.inc({ outcome }, count);
    },

    delivery(attempt: { channel: string; ok: boolean; purpose: string; durationMs: number }) {
      const { deliveries, deliveryDuration } = use();
      deliveries.inc({
        channel: attempt.channel,
        outcome: attempt.ok ? 'success' : 'failed',
        purpose: attempt.purpose,
      });
      deliveryDuration.observe({ channel: attempt.channel }, attempt.durationMs / 1000);
    },

    ingested(
      source: string,
      via: 'api' | 'collector',
      tally: { added: number; duplicates?: number; rejected?: number },
    ) {
      const { ingested } = use();
      const counts = { added: tally.added, duplicate: tally.duplicates ?? 0, rejected: tally.rejected ?? 0 };
      for (const [outcome, count] of Object.entries(counts))
        if (count > 0) ingested.inc({ source, outcome, via }, count);
    },
  };
}

/** One series of the request histogram: per-bucket counts (not cumulative), the last for above every bound. */
interface DurationSeries {
  labels: { method: string; route: string; status_code: number };
  counts: number[];
  sum: number;
  count: number;
}

/**
 * The request-duration histogram (route pattern, method, status). Not prom-client's Histogram,
 * which checks and hashes the labels of every observation: about 0.9 µs, a fortieth of what an
 * authenticated request costs the server (docs/performance.md "API overhead"). Here a series is
 * three map lookups. get() returns what prom-client's histogram returns for its registry to
 * format, so the exposition is the same.
 */
class RequestDurations {
  readonly name = 'dragnet_http_request_duration_seconds';
  readonly help = 'HTTP requests by route pattern (not raw URL), method and status; _count is the request count';
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  /** route → method → status → series */
  private readonly series = new Map<string, Map<string, Map<number, DurationSeries>>>();

  observe(method: string, route: string, status: number, seconds: number): void {
    let byMethod = this.series.get(route);
    if (!byMethod) this.series.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (!series) {
      const counts = new Array<number>(REQUEST_BUCKETS.length + 1).fill(0);
      byStatus.set(status, (series = { labels: { method, route, status_code: status }, counts, sum: 0, count: 0 }));
    }
    let bucket = 0;
    while (bucket < REQUEST_BUCKETS.length && seconds > REQUEST_BUCKETS[bucket]!) bucket++;
    series.counts[bucket]!++;
    series.sum += seconds;
    series.count++;
  }

  get() {
    const values: {
      labels: Record<string, string | number>;
      sharedLabels: object;
      value: number;
      metricName: string;
    }[] = [];
    const bucketName = `${this.name}_bucket`;
    for (const byMethod of this.series.values()) {
      for (const byStatus of byMethod.values()) {
        for (const { labels, counts, sum, count } of byStatus.values()) {
          let cumulative = 0;
          REQUEST_BUCKETS.forEach((le, i) => {
            cumulative += counts[i]!;
            values.push({ labels: { le }, sharedLabels: labels, value: cumulative, metricName: bucketName });
          });
          values.push({ labels: { le: '+Inf' }, sharedLabels: labels, value: count, metricName: bucketName });
          values.push({ labels: {}, sharedLabels: labels, value: sum, metricName: `${this.name}_sum` });
          values.push({ labels: {}, sharedLabels: labels, value: count, metricName: `${this.name}_count` });
        }
      }
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.series.clear();
  }
}

interface MetricsDeps {
  queueDepth: () => Promise<QueueDepth[]>;
  /** With read replicas: their state and the statements run per target (src/db/read-replicas.ts). */
  reads?: ReadRouter;
}

function createInstruments(deps: MetricsDeps) {
  const { Counter, Gauge, Histogram, Registry } = loadPromClient();
  const registry = new Registry();
  const registers = [registry];

  const requestDuration = new RequestDurations();
  // The registry takes any metric that has a name, help, type and get(): it formats what get() returns.
  registry.registerMetric(requestDuration as unknown as Metric);
  const refusals = new Counter({
    name: 'dragnet_rate_limit_refusals_total',
    help: 'Requests refused with 429: code rate_limited (rate limits) or too_many_attempts (login throttling)',
    labelNames: ['route', 'code'] as const,
    registers,
  });
  const ruleRuns = new Counter({
    name: 'dragnet_rule_runs_total',
    help: 'Scheduled rule runs by outcome: matched, empty, failed, or skipped (the window was run by another process)',
    labelNames: ['outcome'] as const,
    registers,
  });
  // Every outcome from the start, so rate() sees the first run as an increase.
  for (const outcome of ['matched', 'empty', 'failed', 'skipped']) ruleRuns.inc({ outcome }, 0);
  const deliveries = new Counter({
    name: 'dragnet_deliveries_total',
    help: 'Email and webhook delivery attempts by channel, outcome (success, failed) and purpose',
    labelNames: ['channel', 'outcome', 'purpose'] as const,
    registers,
  });
  const deliveryDuration = new Histogram({
    name: 'dragnet_delivery_duration_seconds',
    help: 'Time of one email or webhook delivery attempt',
    labelNames: ['channel'] as const,
    buckets: DELIVERY_BUCKETS,
    registers,
  });
  const ingested = new Counter({
    name: 'dragnet_ingested_records_total',
    help: 'Records ingested by this process by source and outcome (added, duplicate, rejected); via api (POST /ingest/) or collector',
    labelNames: ['source', 'outcome', 'via'] as const,
    registers,
  });
  new Gauge({
    name: 'dragnet_queue_depth',
    help: 'Background jobs and notification outbox entries in the store by state (the same in every process sharing a store)',
    labelNames: ['queue', 'status'] as const,
    registers,
    async collect() {
      const rows = await deps.queueDepth();
      for (const [queue, states] of Object.entries(QUEUE_STATES)) {
        for (const status of states)
          this.set({ queue, status }, rows.find((r) => r.queue === queue && r.status === status)?.count ?? 0);
      }
    },
  });

  const reads = deps.reads;
  if (reads?.enabled) {
    const replicaGauge = (
      name: string,
      help: string,
      value: (replica: ReturnType<ReadRouter['status']>[number]) => number | null,
    ) =>
      new Gauge({
        name,
        help,
        labelNames: ['replica'] as const,
        registers,
        collect() {
          this.reset();
          for (const replica of reads.status()) {
            const measured = value(replica);
            if (measured !== null) this.set({ replica: replica.replica }, measured);
          }
        },
      });
    replicaGauge(
      'dragnet_db_replica_up',
      'Read replicas (DRAGNET_DATABASE_READ_URLS): 1 while it answers, 0 while down',
      (r) => (r.state === 'down' ? 0 : 1),
    );
    replicaGauge(
      'dragnet_db_replica_lagging',
      'Read replicas: 1 while skipped because it had not replayed what a read needed in time',
      (r) => (r.state === 'lagging' ? 1 : 0),
    );
    replicaGauge(
      'dragnet_db_replica_lag_bytes',
      'Read replicas: WAL bytes written on the primary not yet replayed',
      (r) => r.lagBytes,
    );
    replicaGauge(
      'dragnet_db_replica_lag_seconds',
      'Read replicas: seconds since the last replayed transaction while behind (0 when caught up)',
      (r) => r.lagSeconds,
    );
    new Counter({
      name: 'dragnet_db_reads_total',
      help: 'Statements of searches, re-reads, exports, quick searches and match reads by where they ran: primary or a replica',
      labelNames: ['target'] as const,
      registers,
      collect() {
        this.reset();
        for (const [target, count] of Object.entries(reads.reads())) this.inc({ target }, count);
      },
    });
  }

  return { registry, requestDuration, refusals, ruleRuns, deliveries, deliveryDuration, ingested };
}

export type Metrics = ReturnType<typeof createMetrics>;
