import { sql, type RawBuilder } from 'kysely';
import { likeContains } from '../../db/like.ts';
import type { Engine } from '../../db/store.ts';
import { foldText, MIN_INDEXED_TERM_LENGTH, type QueryNode } from './query-language.ts';

/**
 * Compiles a query tree into a SQL predicate over `messages m`, one implementation per engine
 * (docs/architecture.md "Search"): SQLite answers terms of 3+ characters from the FTS5 trigram
 * index, PostgreSQL from the pg_trgm GIN index through LIKE. Both match the same thing: a
 * substring of the folded text, the semantics of `matchesFolded`.
 */
export type PredicateCompiler = (tree: QueryNode) => RawBuilder<boolean>;

const ftsPhrase = (folded: string) => `"${folded.replaceAll('"', '""')}"`;
const joinWith = (parts: RawBuilder<unknown>[], operator: 'and' | 'or') =>
  sql<boolean>`(${sql.join(parts, operator === 'and' ? sql` and ` : sql` or `)})`;

/**
 * FTS5 can evaluate the whole tree in one MATCH when every term is long enough for the trigram
 * index and every NOT is an AND child beside at least one positive sibling (FTS5 NOT is binary).
 */
function ftsExpression(node: QueryNode): string | null {
  switch (node.type) {
    case 'term': {
      const folded = foldText(node.value);
      return [...folded].length >= MIN_INDEXED_TERM_LENGTH ? ftsPhrase(folded) : null;
    }
    case 'not':
      return null;
    case 'or': {
      const parts = node.children.map(ftsExpression);
      return parts.every((p) => p !== null) ? `(${parts.join(' OR ')})` : null;
    }
    case 'and': {
      const positives = node.children.filter((c) => c.type !== 'not').map(ftsExpression);
      const negatives = node.children.flatMap((c) => (c.type === 'not' ? [ftsExpression(c.child)] : []));
      if (positives.length === 0 || [...positives, ...negatives].some((p) => p === null)) return null;
      const base = `(${positives.join(' AND ')})`;
      return negatives.length ? `(${base} NOT (${negatives.join(' OR ')}))` : base;
    }
  }
}

function sqlitePredicate(node: QueryNode): RawBuilder<boolean> {
  const whole = ftsExpression(node);
  if (whole !== null) return sql<boolean>`m.id in (select rowid from messages_fts where messages_fts match ${whole})`;
  switch (node.type) {
    case 'term':
      // Too short for trigrams (FTS5 would silently find nothing): scan the folded text.
      return sql<boolean>`instr(m.text_folded, ${foldText(node.value)}) > 0`;
    case 'not':
      return sql<boolean>`not ${sqlitePredicate(node.child)}`;
    default:
      return joinWith(node.children.map(sqlitePredicate), node.type);
  }
}

function postgresPredicate(node: QueryNode): RawBuilder<boolean> {
  switch (node.type) {
    case 'term':
      return likeContains(sql`m.text_folded`, foldText(node.value));
    case 'not':
      return sql<boolean>`not ${postgresPredicate(node.child)}`;
    default:
      return joinWith(node.children.map(postgresPredicate), node.type);
  }
}

export const predicateCompilers: Record<Engine, PredicateCompiler> = {
  sqlite: sqlitePredicate,
  postgres: postgresPredicate,
};
