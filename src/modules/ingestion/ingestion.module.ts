import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Metrics } from '../../lib/metrics.ts';
import { createOutboundHttp, type OutboundGuard } from '../../lib/outbound/index.ts';
import { listSourceCollectors, type SourceContext } from '../sources/index.ts';
import { createCollectorRunner } from './collector-runner.ts';
import { readCollectorsFile } from './collectors-file.ts';
import { inboxCollector } from './inbox-collector.ts';
import { ingestionRoutes } from './ingestion.routes.ts';

/** What feeds the sources besides `dragnet ingest`: collectors, the inbox, and POST /ingest/<source>/. */
export function createIngestionModule(deps: {
  db: Kysely<Database>;
  clock: Clock;
  context: SourceContext;
  collectorsFile: string;
  ingestMaxBytes: number;
  metrics: Metrics;
  guard: OutboundGuard;
}) {
  const known = [
    { collector: inboxCollector, sourceName: null },
    ...listSourceCollectors().map(({ collector, source }) => ({ collector, sourceName: source.name })),
  ];
  // Collectors set their own timeouts per request (their settings' timeout_ms).
  const http = createOutboundHttp(deps.guard);
  const runner = createCollectorRunner({
    db: deps.db,
    clock: deps.clock,
    context: deps.context,
    collectors: readCollectorsFile(deps.collectorsFile, known),
    metrics: deps.metrics,
    http,
  });
  return {
    collectors: runner,
    http,
    routes: ingestionRoutes({ context: deps.context, runner, maxBytes: deps.ingestMaxBytes, metrics: deps.metrics }),
    close: () => http.close(),
  };
}
