import { AsyncLocalStorage } from 'node:async_hooks';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { sql, type Kysely, type Transaction } from 'kysely';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

/**
 * PostgreSQL's bulk path: rows streamed in with `COPY … FROM STDIN` into a staging table of the
 * transaction, then merged into their table by one statement per batch (its ON CONFLICT rules
 * are the merge's, unchanged). A multi-row INSERT of 500 rows sent every value as a bound
 * parameter and had the server plan and run a statement per 500 rows; COPY parses a text
 * stream with no planning at all.
 *
 * Kysely keeps a transaction's connection to itself, so the pool that lends connections
 * (`lendConnections`, under the store's Kysely) records the connection it hands out inside
 * `transactionWithCopy`, where the COPY is sent.
 */

type PoolLike = Pick<pg.Pool, 'connect' | 'end'>;

const borrowing = new AsyncLocalStorage<{ client?: pg.PoolClient }>();

/** The pool, recording the first connection taken inside `transactionWithCopy`: the transaction's. */
export function lendConnections(pool: pg.Pool): PoolLike {
  return {
    connect: (async () => {
      const client = await pool.connect();
      const slot = borrowing.getStore();
      if (slot && !slot.client) slot.client = client;
      return client;
    }) as PoolLike['connect'],
    end: () => pool.end(),
  };
}

/** A value of a COPY row: text, a number, or null. */
export type CopyValue = string | number | null;

/**
 * Streams `rows` (each a `copyRow` of `columns`' values, in order) into `table` on the
 * transaction's connection.
 */
export type CopyIn = (table: string, columns: readonly string[], rows: Iterable<string>) => Promise<void>;

const ROWS_PER_CHUNK = 1000;

// COPY's text format: columns separated by tabs, rows by newlines, \N for null, and the
// backslash, tab, newline and carriage return in a value escaped.
const SPECIAL = /[\\\t\n\r]/g;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
const copyText = (value: CopyValue): string =>
  value === null ? '\\N' : typeof value === 'number' ? String(value) : value.replace(SPECIAL, (c) => ESCAPES[c]!);

/**
 * A row in COPY's text format, without its newline: a writer may encode its rows ahead, before
 * its transaction starts. Joined, not appended to: `+=` leaves a rope of small strings, which
 * held many times the memory while rows waited for their transaction, and was flattened later.
 */
export const copyRow = (values: readonly CopyValue[]): string => values.map(copyText).join('\t');

function* textChunks(rows: Iterable<string>): Generator<string> {
  let chunk: string[] = [];
  for (const row of rows) {
    chunk.push(row);
    if (chunk.length === ROWS_PER_CHUNK) {
      yield chunk.join('\n') + '\n';
      chunk = [];
    }
  }
  if (chunk.length) yield chunk.join('\n') + '\n';
}

/** Our own table and column names, quoted for a COPY statement (which takes no parameters). */
const identifier = (name: string): string => {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain identifier: ${name}`);
  return `"${name}"`;
};

/**
 * Runs `work` in a transaction of `db` (a PostgreSQL store's, whose pool lends connections),
 * with `copy` to stream rows into tables of that transaction.
 */
export function transactionWithCopy<DB, T>(
  db: Kysely<DB>,
  work: (tx: Transaction<DB>, copy: CopyIn) => Promise<T>,
): Promise<T> {
  const slot: { client?: pg.PoolClient } = {};
  return borrowing.run(slot, () =>
    db.transaction().execute((tx) => {
      const client = slot.client;
      if (!client) throw new Error('transactionWithCopy needs a PostgreSQL store whose pool lends its connections');
      const copy: CopyIn = async (table, columns, rows) => {
        const stream = client.query(
          copyFrom(`copy ${identifier(table)} (${columns.map(identifier).join(', ')}) from stdin`),
        );
        await pipeline(Readable.from(textChunks(rows)), stream);
      };
      return work(tx, copy);
    }),
  );
}

/** The column of a staging table that numbers its rows in the order they came (STAGING_ORDER). */
export const STAGING_ORDER = 'ord';

/**
 * A staging table for one transaction, dropped at its commit: `ord` (the rows' order, for a
 * merge that keeps the first of two copies or inserts in input order), then the named columns
 * of `like`, with their types and nothing else (no defaults, constraints or indexes).
 */
export async function createStagingTable<DB>(
  tx: Transaction<DB>,
  options: { name: string; like: string; columns: readonly string[] },
): Promise<void> {
  const columns = sql.join(options.columns.map((c) => sql.ref(c)));
  await sql`create temp table ${sql.id(options.name)} on commit drop as
    select 0 as ${sql.ref(STAGING_ORDER)}, ${columns} from ${sql.table(options.like)} with no data`.execute(tx);
}
