import { analyzeLargeWrites, createWriteTally } from '../../../db/maintenance.ts';
import type { MigrationModule } from '../../../db/migration-helpers.ts';
import { withoutDataPaths } from '../common/ingest/ingest-kit.ts';
import type { ArgParam } from './arg-params.ts';
import type { Collector, Ingester, SourceDefinition } from './source.ts';

/**
 * What every ingester gets around its own run: a report and errors that name no path inside the
 * data folder (withoutDataPaths: the ingestion API, the inbox and standard input read files the
 * server keeps there), and on PostgreSQL fresh planner statistics for the tables it wrote many
 * rows to (db/maintenance.ts), also when it failed part-way, refreshed in the background.
 */
const sharedIngest = (ingester: Ingester): Ingester => ({
  ...ingester,
  async run(context, inputs, options) {
    const tally = context.engine === 'postgres' ? createWriteTally() : null;
    try {
      return withoutDataPaths(
        await ingester.run(tally ? { ...context, db: context.db.withPlugin(tally.plugin) } : context, inputs, options),
        context.dataDir,
      );
    } catch (error) {
      if (error instanceof Error) error.message = withoutDataPaths(error.message, context.dataDir);
      throw error;
    } finally {
      // After the answer, not before it: an ANALYZE of a large table takes a while, and its
      // failure is the operator's to hear of, not the ingest's outcome.
      if (tally) context.background.run('ANALYZE after an ingest', () => analyzeLargeWrites(context.db, tally.rows));
    }
  },
});

/**
 * The lookups the store, the CLI, the catalog endpoint and the rule runner make over the list of
 * sources (sources/catalog.ts), which is handed in so that the kit names no source.
 */
export function createRegistry(sources: SourceDefinition[]) {
  const byId = new Map(sources.map((source) => [source.id, source]));
  const ingesters = new Map(
    sources.flatMap((source) =>
      (source.ingesters ?? []).map((ingester) => [ingester.name, sharedIngest(ingester)] as const),
    ),
  );
  return {
    findSource: (id: number): SourceDefinition | undefined => byId.get(id),
    /** Every `dragnet ingest <name>` target, by name. */
    listIngesters: (): Ingester[] => [...ingesters.values()],
    findIngester: (name: string): Ingester | undefined => ingesters.get(name),
    /** Every source's collectors, with the source they feed. */
    listSourceCollectors: (): { collector: Collector; source: SourceDefinition }[] =>
      sources.flatMap((source) => (source.collectors ?? []).map((collector) => ({ collector, source }))),
    /** The migrations of every source's tables, by their (globally ordered) names. */
    sourceMigrations: (): Record<string, MigrationModule> =>
      Object.assign({}, ...sources.map((source) => source.migrations ?? {})),
  };
}

/** A catalog row as the API shows it (spec 2.9). */
export interface CatalogRow {
  id: number;
  name: string;
  alias: string;
  args_schema: { params: ArgParam[] };
  service_type: 'sync' | 'async';
  excludable_fields: string[];
  filterable_fields: string[];
  sortable_fields: string[];
  frequency: SourceDefinition['frequency'];
  has_data: boolean;
}

export function catalogRow(source: SourceDefinition): CatalogRow {
  return {
    id: source.id,
    name: source.name,
    alias: source.alias,
    args_schema: { params: structuredClone(source.params) },
    service_type: source.serviceType,
    excludable_fields: [...source.excludableFields],
    filterable_fields: [...source.filterableFields],
    sortable_fields: [...source.sortableFields],
    frequency: source.frequency,
    has_data: source.hasData,
  };
}
