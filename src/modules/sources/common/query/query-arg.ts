import type { ArgError } from '../../kit/source.ts';
import { parseQuery, QuerySyntaxError, type QueryNode } from './query-language.ts';

/**
 * A rule's `query` arg parsed as the messenger search parses it: its syntax tree, or null with
 * the syntax error (naming args.query) added to `errors`.
 */
export function parseQueryArg(query: string, errors: ArgError[]): QueryNode | null {
  try {
    return parseQuery(query).tree;
  } catch (error) {
    if (!(error instanceof QuerySyntaxError)) throw error;
    errors.push({ field: 'args.query', message: error.message, rule: 3 });
    return null;
  }
}
