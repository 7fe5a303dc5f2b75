import { sql } from 'kysely';
import type { SourceContext } from './source.ts';

/**
 * `max(column)` of a source's table, optionally of the rows whose `where` column equals a value:
 * both engines answer it from an index that starts with (where, column) or with column, which
 * is why only such columns are given here.
 */
export function newestRecord(table: string, column: string, where?: { column: string; value: string }) {
  return async ({ db }: SourceContext): Promise<number | null> => {
    const filter = where ? sql` where ${sql.ref(where.column)} = ${where.value}` : sql``;
    const { rows } = await sql<{ newest: number | string | null }>`
      select max(${sql.ref(column)}) as newest from ${sql.table(table)}${filter}`.execute(db);
    const newest = rows[0]?.newest;
    return newest === null || newest === undefined ? null : Number(newest);
  };
}

/**
 * `column` of the row stored last (the highest id): for a table whose time column has no index
 * of its own, the primary key finds it at once.
 */
export function lastStoredRecord(table: string, column: string) {
  return async ({ db }: SourceContext): Promise<number | null> => {
    const { rows } = await sql<{ newest: number | string }>`
      select ${sql.ref(column)} as newest from ${sql.table(table)} order by id desc limit 1`.execute(db);
    return rows[0] ? Number(rows[0].newest) : null;
  };
}
