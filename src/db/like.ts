import { sql, type RawBuilder } from 'kysely';

/**
 * `column LIKE pattern` for a literal value with its wildcards escaped. The ESCAPE clause is
 * explicit because SQLite's LIKE has no default escape character (PostgreSQL's is the backslash).
 */
function likeLiteral(column: RawBuilder<unknown>, value: string, where: 'anywhere' | 'suffix'): RawBuilder<boolean> {
  const escaped = value.replace(/[\\%_]/g, (c) => `\\${c}`);
  const pattern = where === 'anywhere' ? `%${escaped}%` : `%${escaped}`;
  return sql<boolean>`${column} like ${pattern} escape '\\'`;
}

/** `column LIKE '%value%'`: the value occurs in the column. */
export const likeContains = (column: RawBuilder<unknown>, value: string) => likeLiteral(column, value, 'anywhere');

/** `column LIKE '%value'`: the value ends the column (a host under a domain). */
export const likeEndsWith = (column: RawBuilder<unknown>, value: string) => likeLiteral(column, value, 'suffix');
