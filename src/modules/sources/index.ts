// The sources module's public surface: other modules import sources only from here.
export { normalizeArgs, validateArgs } from './kit/args-validation.ts';
export {
  findIngester,
  findSource,
  listIngesters,
  listSourceCollectors,
  sourceCatalog,
  sourceMigrations,
} from './catalog.ts';
export { catalogRow, type CatalogRow } from './kit/registry.ts';
export type { IngestProgress } from './common/ingest/ingest-kit.ts';
export { CollectorSettingsError } from './kit/collector-settings.ts';
export { defineCollector } from './kit/source.ts';
export type {
  ArgError,
  BatchRule,
  Collector,
  CollectorOutcome,
  CollectorRun,
  ContextWindow,
  Hit,
  Ingester,
  IngestReport,
  IngestTally,
  MatchResult,
  MatchWindow,
  SourceContext,
  SourceDefinition,
  StixDescription,
  StixObservable,
} from './kit/source.ts';
export { createLeakQueries, type LeakQueries } from './common/leaks/leak-queries.ts';
// The text query language: the messenger search module evaluates it too.
export { matchCompilers, type CompiledMatch } from './common/query/message-search.sql.ts';
export {
  foldText,
  formatQuery,
  MIN_INDEXED_TERM_LENGTH,
  parseQuery,
  positiveTerms,
  QuerySyntaxError,
  type QueryNode,
} from './common/query/query-language.ts';
export { textPreview } from './common/query/text-preview.ts';
export { createTrigramStats, type TrigramStats } from './common/query/trigram-stats.ts';
export {
  CHUNK_WORDS,
  countingWords,
  HAS_LONG_WORDS,
  lexiconRead,
  LONG_WORDS,
  type LexiconRead,
  type WordNarrowing,
} from './common/query/word-index.ts';
export { bitmapCount, channelBitmapCounts, wordsWithBitmaps } from './common/query/word-bitmaps.ts';
export type { ChannelBitmapCount } from './common/query/word-bitmaps.ts';
