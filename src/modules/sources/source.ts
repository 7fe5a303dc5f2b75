import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { Engine } from '../../db/store.ts';
import type { Frequency } from '../rules/frequency.ts';

/**
 * One monitorable data source (spec 2.9): its catalog row, the schema of a rule's `args`, and a
 * matcher that finds the hits of one rule within a time window. A source is added by adding a
 * folder under src/modules/sources/ and listing it in catalog.ts.
 */
export type ArgType = 'Int' | 'Float' | 'Boolean' | 'String' | 'Array[Int]' | 'Array[Float]' | 'Array[String]' | 'Array[Boolean]';

export interface ArgParam {
  name: string;
  type: ArgType;
  required: boolean;
  hint?: string;
  example?: unknown;
  /** When set, every value (or every array element) must be one of these. */
  valid_values?: (string | number)[];
}

export interface Hit {
  /** Identifies the hit within its source (deduplication across runs). */
  key: string;
  /** When the hit appeared (epoch ms): the window test uses it. */
  date: number;
  /** The result fields; excludable/filterable/sortable fields name keys of this object. */
  data: Record<string, unknown>;
}

/** The half-open window (since, until]: a hit exactly at `since` is not new (spec 3.3.3). */
export interface MatchWindow {
  since: number | null;
  until: number;
}

export interface SourceContext {
  db: Kysely<Database>;
  engine: Engine;
}

export interface SourceDefinition {
  id: number;
  name: string;
  alias: string;
  description: string;
  serviceType: 'sync' | 'async';
  /** The fastest cadence the source's data supports (spec 3.4 frequencies). */
  frequency: Frequency;
  params: ArgParam[];
  excludableFields: string[];
  filterableFields: string[];
  sortableFields: string[];
  /** The hits of one rule within the window, newest first, at most `limit`. */
  match(context: SourceContext, args: Record<string, unknown>, window: MatchWindow, limit: number): Promise<MatchResult>;
  /**
   * Optional batch path for the hourly tick: the hits of many rules from one scan of the new
   * data (percolation) instead of one query per rule.
   */
  matchMany?(context: SourceContext, rules: BatchRule[], until: number, limit: number): Promise<Map<number, MatchResult>>;
}

export interface MatchResult {
  hits: Hit[];
  total: number;
}

export interface BatchRule {
  ruleId: number;
  args: Record<string, unknown>;
  since: number;
}

/** A source whose data Dragnet does not ingest yet: its schema validates, it finds nothing. */
export function sourceWithoutData(definition: Omit<SourceDefinition, 'match'>): SourceDefinition {
  return { ...definition, match: async () => ({ hits: [], total: 0 }) };
}
