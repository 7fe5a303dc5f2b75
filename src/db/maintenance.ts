import {
  InsertQueryNode,
  sql,
  TableNode,
  UpdateQueryNode,
  type Kysely,
  type KyselyPlugin,
  type OperationNode,
} from 'kysely';
import type { Database } from './schema.ts';
import type { Store } from './store.ts';

/**
 * PostgreSQL upkeep the planner depends on. Its statistics come from ANALYZE, which autovacuum
 * runs only after a share of a table has changed and never runs on a partitioned parent
 * (`messages`): after a large ingest, plans made for the tables as they were (a few rows) turned
 * a broad rule into a run of minutes. So an ingest that wrote many rows analyzes the tables it
 * wrote, and a process warns at start when autovacuum is off.
 */

/** Rows an ingest writes to a table for its statistics to be refreshed at once... */
const LARGE_WRITE_ROWS = 10_000;
/** ...or this share of the rows the table had, when at least MIN_SHARE_ROWS. */
const SHARE_OF_TABLE = 0.1;
const MIN_SHARE_ROWS = 1_000;

const tableOf = (node: OperationNode | undefined): string | undefined =>
  node && TableNode.is(node) ? node.table.identifier.name : undefined;

/** A Kysely plugin that counts the rows each INSERT and UPDATE wrote, by table. */
export function createWriteTally() {
  const pending = new WeakMap<object, string>();
  const rows = new Map<string, number>();
  const plugin: KyselyPlugin = {
    transformQuery({ node, queryId }) {
      const table = InsertQueryNode.is(node)
        ? tableOf(node.into)
        : UpdateQueryNode.is(node)
          ? tableOf(node.table)
          : undefined;
      if (table) pending.set(queryId, table);
      return node;
    },
    async transformResult({ result, queryId }) {
      const table = pending.get(queryId);
      if (table && result.numAffectedRows) rows.set(table, (rows.get(table) ?? 0) + Number(result.numAffectedRows));
      return result;
    },
  };
  return { plugin, rows };
}

/**
 * ANALYZE of the tables that `rows` wrote many rows to (LARGE_WRITE_ROWS, or SHARE_OF_TABLE of
 * the rows the planner knew of); returns their names. PostgreSQL only.
 */
export async function analyzeLargeWrites(db: Kysely<Database>, rows: Map<string, number>): Promise<string[]> {
  if (rows.size === 0) return [];
  // reltuples is the planner's row count from the last ANALYZE (-1: never analyzed).
  const known = await sql<{ relname: string; reltuples: number }>`
    select relname, reltuples from pg_class
    where relnamespace = current_schema()::regnamespace and relname in (${sql.join([...rows.keys()])})`.execute(db);
  const large = known.rows
    .filter(({ relname, reltuples }) => {
      const written = rows.get(relname) ?? 0;
      return (
        written >= LARGE_WRITE_ROWS ||
        (written >= MIN_SHARE_ROWS && written >= SHARE_OF_TABLE * Math.max(0, Number(reltuples)))
      );
    })
    .map(({ relname }) => relname)
    .sort();
  if (large.length) await sql`analyze ${sql.join(large.map((name) => sql.table(name)))}`.execute(db);
  return large;
}

/** What an operator should hear at start about autovacuum: off on the server, or on some of our tables. */
export async function autovacuumWarnings(store: Pick<Store, 'engine' | 'db'>): Promise<string[]> {
  if (store.engine !== 'postgres') return [];
  const warnings: string[] = [];
  const setting = await sql<{ autovacuum: string }>`select current_setting('autovacuum') as autovacuum`.execute(
    store.db,
  );
  if (setting.rows[0]?.autovacuum !== 'on') {
    warnings.push(
      'PostgreSQL autovacuum is off: dead rows and stale planner statistics accumulate; turn it on (autovacuum = on) or run VACUUM ANALYZE regularly',
    );
  }
  const disabled = await sql<{ relname: string }>`
    select relname from pg_class
    where relnamespace = current_schema()::regnamespace and relkind in ('r', 'p')
      and reloptions @> array['autovacuum_enabled=false']
    order by relname`.execute(store.db);
  if (disabled.rows.length) {
    warnings.push(
      `PostgreSQL autovacuum is disabled on tables: ${disabled.rows.map((row) => row.relname).join(', ')} (ALTER TABLE … RESET (autovacuum_enabled))`,
    );
  }
  return warnings;
}
