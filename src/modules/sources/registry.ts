import { appStoreSource } from './app_store/app_store.source.ts';
import { binCvvSource } from './bin_cvv/bin_cvv.source.ts';
import { certificateSource } from './certificate/certificate.source.ts';
import { chatServerSource } from './chat_server/chat_server.source.ts';
import { cloudBucketSource } from './cloud_bucket/cloud_bucket.source.ts';
import { creditCardSource } from './credit_card/credit_card.source.ts';
import { distinctLeakSource } from './distinct_leak/distinct_leak.source.ts';
import { filteredLeakSource } from './filtered_leak/filtered_leak.source.ts';
import { hackerForumSource } from './hacker_forum/hacker_forum.source.ts';
import { messengerSource } from './messenger/messenger.source.ts';
import { pasteSiteSource } from './paste_site/paste_site.source.ts';
import { phishingSource } from './phishing/phishing.source.ts';
import { ransomwareSource } from './ransomware/ransomware.source.ts';
import { rawLeakExtendedSource } from './raw_leak_extended/raw_leak_extended.source.ts';
import { analyzeLargeWrites, createWriteTally } from '../../db/maintenance.ts';
import type { MigrationModule } from '../../db/migration-helpers.ts';
import { withoutDataPaths } from './ingest/ingest-kit.ts';
import type { ArgType, Collector, Ingester, SourceDefinition } from './source.ts';
import { urlShortenerSource } from './url_shortener/url_shortener.source.ts';

/**
 * The registry: the 15 monitorable services of spec section 1, in id order. Ids are what rules
 * store (`service`), so they never change; a new source takes the next id. The store (its
 * tables), the CLI (`dragnet ingest`, `dragnet demo`), the catalog endpoint and the rule runner
 * read this list and name no source. docs/sources.md describes them.
 */
export const sourceCatalog: SourceDefinition[] = [
  messengerSource,
  chatServerSource,
  filteredLeakSource,
  rawLeakExtendedSource,
  distinctLeakSource,
  creditCardSource,
  binCvvSource,
  phishingSource,
  certificateSource,
  ransomwareSource,
  hackerForumSource,
  pasteSiteSource,
  appStoreSource,
  cloudBucketSource,
  urlShortenerSource,
];

const byId = new Map(sourceCatalog.map((source) => [source.id, source]));

export function findSource(id: number): SourceDefinition | undefined {
  return byId.get(id);
}

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
      return withoutDataPaths(await ingester.run(tally ? { ...context, db: context.db.withPlugin(tally.plugin) } : context, inputs, options), context.dataDir);
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

const ingesters = new Map(sourceCatalog.flatMap((source) => (source.ingesters ?? []).map((ingester) => [ingester.name, sharedIngest(ingester)] as const)));

/** Every `dragnet ingest <name>` target, by name. */
export const listIngesters = (): Ingester[] => [...ingesters.values()];

export const findIngester = (name: string): Ingester | undefined => ingesters.get(name);

/** Every source's collectors, with the source they feed. */
export const listSourceCollectors = (): { collector: Collector; source: SourceDefinition }[] =>
  sourceCatalog.flatMap((source) => (source.collectors ?? []).map((collector) => ({ collector, source })));

/** The migrations of every source's tables, by their (globally ordered) names. */
export const sourceMigrations = (): Record<string, MigrationModule> => Object.assign({}, ...sourceCatalog.map((source) => source.migrations ?? {}));

export interface CatalogParam {
  name: string;
  type: ArgType;
  required: boolean;
  hint?: string;
  example?: unknown;
  valid_values?: (string | number)[];
}

/** A catalog row as the API shows it (spec 2.9). */
export interface CatalogRow {
  id: number;
  name: string;
  alias: string;
  args_schema: { params: CatalogParam[] };
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
    args_schema: {
      params: source.params.map((param) => {
        const row: CatalogParam = { name: param.name, type: param.type, required: param.required };
        if (param.hint !== undefined) row.hint = param.hint;
        if (param.example !== undefined) row.example = param.example;
        if (param.valid_values !== undefined) row.valid_values = [...param.valid_values];
        return row;
      }),
    },
    service_type: source.serviceType,
    excludable_fields: [...source.excludableFields],
    filterable_fields: [...source.filterableFields],
    sortable_fields: [...source.sortableFields],
    frequency: source.frequency,
    has_data: source.hasData,
  };
}
