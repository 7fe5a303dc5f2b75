import type { Static, TObject } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import type { MigrationModule } from '../../../db/migration-helpers.ts';
import type { Database } from '../../../db/schema.ts';
import type { Engine } from '../../../db/store.ts';
import type { BackgroundTasks } from '../../../lib/log.ts';
import type { Clock } from '../../../lib/clock.ts';
import type { KeyRing } from '../../../lib/crypto.ts';
import type { Log } from '../../../lib/log.ts';
import type { OutboundHttp } from '../../../lib/outbound/index.ts';
import type { Frequency } from '../../../lib/frequency.ts';
import { paramsOf, type ArgParam } from './arg-params.ts';
import { checkCollectorSettings } from './collector-settings.ts';
import type { IngestProgress, IngestWarning } from '../common/ingest/ingest-kit.ts';

/** One broken args rule, as a rule's validation error names it (args-validation.ts, `prepare`). */
export interface ArgError {
  field: string;
  message: string;
  /** The spec 2.10 rule broken: 1 unknown key, 2 missing required, 3 type or value, 4 reserved key. */
  rule: 1 | 2 | 3 | 4;
}

export interface Hit {
  /** Identifies the hit within its source (deduplication across runs). */
  key: string;
  /** When the hit appeared (epoch ms): the window test uses it. */
  date: number;
  /** The result fields; excludable/filterable/sortable fields name keys of this object. */
  data: Record<string, unknown>;
}

/** How many posts before and after a hit its context shows. */
export interface ContextWindow {
  before: number;
  after: number;
}

/** One post of a hit's conversation. */
export interface ContextPost {
  /** The post's id within its conversation (a message id, a post id). */
  id: string;
  author: string | null;
  /** ISO 8601, or null when the source has no date for it. */
  date: string | null;
  text: string;
  /** Whether this post is the hit itself. */
  is_hit: boolean;
}

/** A hit's conversation: what it is called and the posts around the hit. */
export interface HitContext {
  /** The channel or thread as a person names it (`@channel`, `Server › #channel`, a thread title). */
  title: string;
  posts: ContextPost[];
}

/** The half-open window (since, until]: a hit exactly at `since` is not new (spec 3.3.3). */
export interface MatchWindow {
  since: number | null;
  until: number;
}

/**
 * What a source's code may use: the store, the clock, the master-key ring for secrets, and the
 * data folder (for sources that keep files).
 */
export interface SourceContext {
  db: Kysely<Database>;
  engine: Engine;
  clock: Clock;
  keys: KeyRing;
  dataDir: string;
  /** Upkeep after an ingest (ANALYZE), which no answer waits for. */
  background: BackgroundTasks;
  /** Where failures that must not change an outcome are reported. */
  log: Log;
  /** Set while an async source's background job runs: how much of the work is done. */
  reportProgress?(done: number, total: number, unit: string): Promise<void>;
}

export interface MatchResult {
  hits: Hit[];
  total: number;
}

/** One rule of a matchMany pass: its args (as stored, or as its source's prepare made them). */
export interface BatchRule<Args = Record<string, unknown>> {
  ruleId: number;
  args: Args;
  since: number;
}

export interface IngestOptions {
  /** One of the ingester's `formats`; the first is the default. */
  format: string;
  /** Messenger: the category of channels whose records name none. */
  category?: string;
  /** URL shortener: the service of dumps that name none (`v.gd` or `https://v.gd/`). */
  shortener?: string;
  progress?: IngestProgress;
}

/** What every ingester counts alike: the ingestion API answers with these. */
export interface IngestTally {
  /** Records read (lines, messages, posts…). */
  records: number;
  added: number;
  duplicates: number;
  rejected: number;
  /** The first rejections and input failures, `location` naming the input and record. */
  errors: { location: string; reason: string }[];
  /** Values stored as null rather than guessed, per reason, the most frequent first. */
  warnings: IngestWarning[];
}

/** The outcome of one `dragnet ingest` call: a JSON summary and the lines a person reads. */
export interface IngestReport {
  summary: Record<string, unknown>;
  lines: string[];
  /** Some input could not be read at all (the command exits 1). */
  failed: boolean;
  tally: IngestTally;
}

export interface Ingester {
  /** The word after `dragnet ingest` (usually the source's name). */
  name: string;
  description: string;
  /** Accepted `--format` values, the default first. */
  formats: string[];
  /** Ingests files, folders, or `-` (standard input). */
  run(context: SourceContext, inputs: string[], options: IngestOptions): Promise<IngestReport>;
}

/** What a collector's run is given besides the source context. */
export interface CollectorRun<Settings> {
  /** The collector's entry of the collectors file, checked against its `settings` and refined. */
  settings: Settings;
  /** Where the previous run stopped (null on the first run). */
  cursor: unknown;
  /** Keeps progress made so far: a run killed after this resumes from here. */
  saveCursor(cursor: unknown): Promise<void>;
  /** Aborted when the process stops: end the run at the next safe point. */
  signal: AbortSignal;
  /**
   * HTTP out, through the outbound guard (src/lib/outbound): public addresses or the operator's
   * DRAGNET_OUTBOUND_ALLOW_HOSTS only, redirects followed a few hops, each hop checked. A
   * collector never uses fetch itself: a feed redirecting to 127.0.0.1 would be followed.
   */
  http: OutboundHttp;
  log(message: string): void;
}

export interface CollectorOutcome {
  /** Records stored by this run. */
  items: number;
  cursor: unknown;
  /** A collector that feeds several sources through their ingesters (the inbox): what each took. */
  ingested?: { ingester: string; tally: IngestTally }[];
}

/** What a collector is, apart from its settings and its run. */
interface CollectorInfo {
  /** The collector's key in the collectors file and in `dragnet collectors`. */
  name: string;
  description: string;
  defaultIntervalSeconds: number;
  /** Needs no settings and no network: runs unless the collectors file turns it off. */
  enabledByDefault: boolean;
}

/**
 * A job that fetches a source's new data on its own schedule (a CT log, a leak-site feed, a
 * scraping API) and stores it like the source's ingester would, as a plugin writes it. The
 * collectors module runs it every `interval_seconds`, keeps its cursor and health, and backs off
 * after failures (docs/collectors.md).
 */
export interface CollectorPlugin<Schema extends TObject, Settings> extends CollectorInfo {
  /**
   * Its entry of the collectors file (without `enabled`/`interval_seconds`, which the
   * collectors module reads) as a TypeBox object: `default` for an optional setting's value,
   * `Type.Optional` for one without, `format: 'http-url'` for a feed URL, `errorMessage` for a
   * refusal in the collector's own words. collector-settings.ts checks the entry against it.
   */
  settings: Schema;
  /**
   * Checks a schema cannot say (a log named twice), run on settings the schema accepted with
   * its defaults applied, throwing CollectorSettingsError naming the key; and what `run` gets
   * made of them (a derived default, a normalized URL). Without it, `run` gets the settings as
   * checked.
   */
  refine?(settings: Static<Schema>): Settings;
  run(context: SourceContext, run: CollectorRun<Settings>): Promise<CollectorOutcome>;
}

/** A collector with its settings type erased, as the registry lists it. */
export interface Collector extends CollectorInfo {
  /** The collector's entry checked and refined; throws CollectorSettingsError. */
  parseSettings(raw: Record<string, unknown>): unknown;
  run(context: SourceContext, run: CollectorRun<unknown>): Promise<CollectorOutcome>;
}

export function defineCollector<Schema extends TObject, Settings = Static<Schema>>(
  collector: CollectorPlugin<Schema, Settings>,
): Collector {
  const { settings: schema, refine, run, ...info } = collector;
  return {
    ...info,
    parseSettings(raw) {
      const checked = checkCollectorSettings(info.name, schema, raw);
      return refine ? refine(checked) : checked;
    },
    // The contract's one cast: the collectors module hands run only what parseSettings returned.
    run: (context, given) => run(context, given as CollectorRun<Settings>),
  };
}

/**
 * One STIX 2.1 Cyber-observable object a hit names (docs/stix.md): its type and properties as
 * the STIX specification defines them (id, spec_version and markings are the mapper's). `refs`
 * names reference properties pointing at other observables of the same description, by index
 * (`resolves_to_refs: [1]`, `belongs_to_ref: 0`).
 */
export interface StixObservable {
  type: string;
  properties: Record<string, unknown>;
  refs?: Record<string, number | number[]>;
}

/** What a source knows about one of its hits in STIX terms; the STIX mapper builds the objects. */
export interface StixDescription {
  observables: StixObservable[];
  /**
   * Present when the hit is itself an indicator (a lookalike domain, a phishing URL): its STIX
   * pattern, its indicator types (indicator-type-ov) and a name.
   */
  indicator?: { pattern: string; types: string[]; name: string };
  /** A one-line summary (the note's abstract). */
  summary: string;
  /** The text a person reads: a message, a post, a paste, or the hit's facts as lines. */
  text: string;
}

/** What prepare makes of a rule's args: the value the matcher takes, or why there is none. */
export type Prepared<Value> = { value: Value } | { errors: ArgError[] };

/** prepare's outcome from the errors found: the value (made only when there are none), or the errors. */
export const preparedOrErrors = <Value>(errors: ArgError[], value: () => Value): Prepared<Value> =>
  errors.length ? { errors } : { value: value() };

/** What a source is, apart from its args and matcher. */
interface SourceInfo {
  id: number;
  name: string;
  alias: string;
  description: string;
  serviceType: 'sync' | 'async';
  /** The fastest cadence the source's data supports (spec 3.4 frequencies). */
  frequency: Frequency;
  excludableFields: string[];
  filterableFields: string[];
  sortableFields: string[];
  /** Whether Dragnet ingests data for this source (docs/sources.md "data: yes"). */
  hasData: boolean;
  /**
   * A stored hit as the rule's own organization sees it through the hits endpoint: fields kept
   * for a reveal (a sealed password) left out. Default: as stored.
   */
  presentHit?(data: Record<string, unknown>): Record<string, unknown>;
  /**
   * The hit in STIX 2.1 terms (docs/stix.md), from its data as presentHit leaves it: never a
   * password (only that one exists), never a full card number.
   */
  stix?(data: Record<string, unknown>): StixDescription;
  /**
   * The secret fields of a stored hit in clear (a leaked password), for the one user who asks
   * for them through the reveal endpoint, which records that in the audit log. A source without
   * it has nothing to reveal.
   */
  revealHit?(data: Record<string, unknown>, context: SourceContext): Record<string, unknown> | null;
  /**
   * For a hit that is one post of a conversation (a channel's message, a thread's post): the
   * posts around it in that conversation, oldest first, the hit among them. null when the hit
   * names no conversation that is stored.
   */
  hitContext?(
    context: SourceContext,
    hit: { key: string; data: Record<string, unknown> },
    around: ContextWindow,
  ): Promise<HitContext | null>;
  /**
   * When the newest record the source stores was stored (or posted, for messages), in epoch
   * ms; null while it has none. The home page asks it of every source at once, so it reads an
   * index or a small table, never a scan.
   */
  newestRecordAt?(context: SourceContext): Promise<number | null>;
  /** The tables the source owns, by migration name (names sort into one global order). */
  migrations?: Record<string, MigrationModule>;
  ingesters?: Ingester[];
  collectors?: Collector[];
  /**
   * Loads demo data dated up to `now` so that a rule with the catalog's own `example` args
   * finds a hit on its first run; returns one line saying what was added. Idempotent.
   */
  demo?(context: SourceContext, now: number): Promise<string>;
}

/**
 * One monitorable data source (spec 2.9) as a plugin writes it: its catalog row and `args`
 * schema, the tables it owns (its migrations), its ingesters (the `dragnet ingest <name>`
 * parsers of real input formats), its matcher, and its demo data. A source lives in one folder
 * under src/modules/sources/, is made with defineSource and listed once in catalog.ts; nothing
 * else names it (docs/architecture.md "Adding a source").
 */
export interface SourcePlugin<Args extends TObject, Value> extends SourceInfo {
  /**
   * The rule args as a TypeBox object: the catalog's args_schema params and the spec 2.10
   * validation derive from it (arg-params.ts says how: types, optional properties,
   * `description` for the hint, `examples[0]` for the example, a union of literals for
   * valid_values).
   */
  args: Args;
  /**
   * Checks beyond the declared types (a query's syntax, parameters that depend on another arg),
   * run on args whose types hold, strings trimmed and blank optional ones left out; and the
   * parse the matcher needs (a query's syntax tree, a domain target), made once per run. Errors
   * name the field (`args.<name>`).
   */
  prepare(args: Static<Args>): Prepared<Value>;
  /**
   * Checks against stored data (a channel id that exists), run after every other check passed,
   * so that a rule accepts exactly the args a search over the same data accepts.
   */
  checkStoredReferences?(context: SourceContext, args: Static<Args>): Promise<ArgError[]>;
  /** The hits of one rule within the window, newest first, at most `limit`. */
  match(context: SourceContext, args: Value, window: MatchWindow, limit: number): Promise<MatchResult>;
  /**
   * Optional batch path for the hourly tick: the hits of many rules from one scan of the new
   * data (percolation) instead of one query per rule.
   */
  matchMany?(
    context: SourceContext,
    rules: BatchRule<Value>[],
    until: number,
    limit: number,
  ): Promise<Map<number, MatchResult>>;
}

/**
 * A source as the catalog lists it: its params derived from its `args`, and its matcher taking
 * a rule's args as stored, prepared on the way in (args its prepare refuses, as a rule stored
 * under older checks may have, find nothing).
 */
export interface SourceDefinition extends SourceInfo {
  params: ArgParam[];
  prepare(args: Record<string, unknown>): Prepared<unknown>;
  checkStoredReferences?(context: SourceContext, args: Record<string, unknown>): Promise<ArgError[]>;
  match(
    context: SourceContext,
    args: Record<string, unknown>,
    window: MatchWindow,
    limit: number,
  ): Promise<MatchResult>;
  matchMany?(
    context: SourceContext,
    rules: BatchRule[],
    until: number,
    limit: number,
  ): Promise<Map<number, MatchResult>>;
}

const NOTHING = (): MatchResult => ({ hits: [], total: 0 });

/** A source with its args types erased, as the catalog lists it. */
export function defineSource<Args extends TObject, Value>(source: SourcePlugin<Args, Value>): SourceDefinition {
  const { args, prepare, checkStoredReferences, match, matchMany, ...info } = source;
  // The contract's one cast: args reach a source only through validateArgs, which holds them to
  // the params derived from `args`, at the rule's create or update and so before they are stored.
  const typed = (stored: Record<string, unknown>) => stored as Static<Args>;
  const definition: SourceDefinition = {
    ...info,
    params: paramsOf(args),
    prepare: (stored) => prepare(typed(stored)),
    async match(context, stored, window, limit) {
      const prepared = prepare(typed(stored));
      return 'errors' in prepared ? NOTHING() : match(context, prepared.value, window, limit);
    },
  };
  if (checkStoredReferences)
    definition.checkStoredReferences = (context, stored) => checkStoredReferences(context, typed(stored));
  if (matchMany) {
    definition.matchMany = async (context, rules, until, limit) => {
      const results = new Map<number, MatchResult>();
      const prepared: BatchRule<Value>[] = [];
      for (const rule of rules) {
        const outcome = prepare(typed(rule.args));
        if ('errors' in outcome) results.set(rule.ruleId, NOTHING());
        else prepared.push({ ...rule, args: outcome.value });
      }
      if (prepared.length === 0) return results;
      for (const [ruleId, result] of await matchMany(context, prepared, until, limit)) results.set(ruleId, result);
      return results;
    };
  }
  return definition;
}
