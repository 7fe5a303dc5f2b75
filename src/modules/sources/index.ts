// The sources module's public surface: other modules import sources only from here.
export { normalizeArgs, validateArgs, type ArgError } from './args-validation.ts';
export { catalogRow, findIngester, findSource, listIngesters, listSourceCollectors, sourceCatalog, sourceMigrations, type CatalogRow } from './registry.ts';
export type { IngestProgress } from './ingest/ingest-kit.ts';
export { CollectorSettingsError, defineCollector } from './source.ts';
export type { BatchRule, Collector, CollectorOutcome, CollectorRun, Hit, Ingester, IngestReport, IngestTally, MatchResult, MatchWindow, SourceContext, SourceDefinition } from './source.ts';
export { createLeakQueries, type LeakQueries } from './leaks/leak-queries.ts';
