import { sql, type InsertQueryBuilder, type InsertResult, type Kysely, type Transaction } from 'kysely';
import {
  copyRow,
  createStagingTable,
  STAGING_ORDER,
  transactionWithCopy,
  type CopyIn,
  type CopyValue,
} from './pg-copy.ts';
import type { Engine } from './store.ts';

/**
 * A source's bulk write on either store, with one meaning: rows are inserted in the order given,
 * and a row whose unique key is already taken (by a stored row or an earlier row of the same
 * write) is skipped. SQLite: multi-row INSERTs (its bound-parameter limit sets their size).
 * PostgreSQL: COPY into a staging table, then one INSERT … SELECT in the rows' order with the
 * same ON CONFLICT rule, so the first of two copies stands there too.
 */
export interface BulkRows<Row extends Record<string, CopyValue>> {
  table: string;
  rows: Row[];
  /**
   * What makes a row a duplicate: the columns of one unique key, `'any'` for any unique key of
   * the table (ON CONFLICT DO NOTHING without a target), or `'none'` (every row is inserted).
   */
  conflict: readonly string[] | 'any' | 'none';
  /** SQLite: the rows of each INSERT statement. */
  statements: (rows: Row[]) => Iterable<Row[]>;
}

// The store's tables as the helper sees them: any table, any columns.
type LooseDb = Record<string, Record<string, CopyValue>>;

/** Rows in slices of `size`: SQLite's statements of a write. */
export const slices =
  (size: number) =>
  <Row>(rows: Row[]): Iterable<Row[]> =>
    Array.from({ length: Math.ceil(rows.length / size) }, (_, i) => rows.slice(i * size, (i + 1) * size));

/** A unique-key clash skips the row, as `conflict` says (none: every row is inserted). */
function withConflictRule<Q extends { onConflict: InsertQueryBuilder<LooseDb, string, InsertResult>['onConflict'] }>(
  insert: Q,
  conflict: BulkRows<Record<string, CopyValue>>['conflict'],
) {
  return conflict === 'none'
    ? insert
    : insert.onConflict((oc) => (conflict === 'any' ? oc : oc.columns(conflict)).doNothing());
}

async function insertStatements<Row extends Record<string, CopyValue>>(
  tx: Kysely<LooseDb>,
  spec: BulkRows<Row>,
): Promise<number> {
  let added = 0;
  for (const chunk of spec.statements(spec.rows)) {
    const result = await withConflictRule(tx.insertInto(spec.table).values(chunk), spec.conflict).executeTakeFirst();
    added += Number(result.numInsertedOrUpdatedRows ?? 0n);
  }
  return added;
}

async function copyStatement<Row extends Record<string, CopyValue>>(
  tx: Transaction<LooseDb>,
  copy: CopyIn,
  spec: BulkRows<Row>,
): Promise<number> {
  const names = Object.keys(spec.rows[0]!);
  const staging = `${spec.table}_staging`;
  await createStagingTable(tx, { name: staging, like: spec.table, columns: names });
  await copy(
    staging,
    [STAGING_ORDER, ...names],
    spec.rows.map((row, i) => copyRow([i, ...names.map((name) => row[name] ?? null)])),
  );
  const columns = sql.join(names.map((name) => sql.ref(name)));
  // Built as an INSERT query, not raw SQL: the write tally (db/maintenance.ts) counts its rows.
  const insert = tx
    .insertInto(spec.table)
    .columns(names)
    .expression(sql`select ${columns} from ${sql.table(staging)} order by ${sql.ref(STAGING_ORDER)}`);
  const result = await withConflictRule(insert, spec.conflict).executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n);
}

/**
 * Writes `spec` in the transaction `tx` (on PostgreSQL one of `transactionWithCopy`, whose
 * `copy` is given) and returns how many rows were added.
 */
export function writeRowsIn<DB, Row extends Record<string, CopyValue>>(
  tx: Transaction<DB>,
  copy: CopyIn | null,
  spec: BulkRows<Row>,
): Promise<number> {
  if (spec.rows.length === 0) return Promise.resolve(0);
  const loose = tx as unknown as Transaction<LooseDb>;
  return copy ? copyStatement(loose, copy, spec) : insertStatements(loose, spec);
}

/**
 * Runs `work` in a transaction of `db`, with `copy` on PostgreSQL (null on SQLite), for writes
 * through `writeRowsIn`.
 */
export function bulkTransaction<DB, T>(
  db: Kysely<DB>,
  engine: Engine,
  work: (tx: Transaction<DB>, copy: CopyIn | null) => Promise<T>,
): Promise<T> {
  return engine === 'postgres' ? transactionWithCopy(db, work) : db.transaction().execute((tx) => work(tx, null));
}

/** Writes `spec` in a transaction of its own and returns how many rows were added. */
export const writeRows = <DB, Row extends Record<string, CopyValue>>(
  db: Kysely<DB>,
  engine: Engine,
  spec: BulkRows<Row>,
): Promise<number> => bulkTransaction(db, engine, (tx, copy) => writeRowsIn(tx, copy, spec));
