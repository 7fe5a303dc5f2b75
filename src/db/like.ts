import { sql, type RawBuilder } from 'kysely';

/**
 * `column LIKE '%value%'` with the value's wildcards escaped. The ESCAPE clause is explicit
 * because SQLite's LIKE has no default escape character (PostgreSQL's is the backslash).
 */
export function likeContains(column: RawBuilder<unknown>, value: string): RawBuilder<boolean> {
  const pattern = `%${value.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return sql<boolean>`${column} like ${pattern} escape '\\'`;
}
