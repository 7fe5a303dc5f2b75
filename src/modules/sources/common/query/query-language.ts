/**
 * The messenger search query language (docs/api.md "Query language"): terms, "quoted phrases",
 * AND, OR, NOT, -term, parentheses, and implicit AND between adjacent terms. Precedence from
 * loosest to tightest: OR, AND (explicit or implicit), NOT. Operators are upper-case words;
 * lower-case "and"/"or"/"not" are ordinary terms. Every term matches as a case-insensitive
 * substring of the message text (Unicode lower-casing), so acme.com finds user@acme.com.
 */
export type QueryNode =
  | { type: 'term'; value: string; phrase: boolean; position: number }
  | { type: 'and'; children: QueryNode[] }
  | { type: 'or'; children: QueryNode[] }
  | { type: 'not'; child: QueryNode };

export class QuerySyntaxError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    // For people: the nth character, counting from 1 (`position` counts from 0, as code does).
    super(`${message} (at character ${position + 1})`);
  }
}

export const MAX_QUERY_LENGTH = 1000;
export const MAX_QUERY_TERMS = 64;
/** Shorter terms cannot use the trigram indexes and are matched by scanning. */
export const MIN_INDEXED_TERM_LENGTH = 3;

// Lower-casing plus the one length-preserving fold it misses: Greek final sigma, so ΟΔΟΣ is
// found inside ΟΔΟΣΗΜΑΝΣΗ. Folding must never change lengths much: previews map positions back.
export const foldText = (text: string): string => text.toLowerCase().replaceAll('ς', 'σ');

type Token =
  | { kind: 'word' | 'phrase'; value: string; position: number; end: number }
  // A lexical error is kept as a token so that one in the part truncation cuts off is dropped.
  | { kind: 'error'; message: string; position: number; end: number }
  | { kind: 'and' | 'or' | 'not' | 'lparen' | 'rparen'; position: number; end: number };

// A Map, not an object: a term such as __proto__ or constructor must not find a prototype member.
const OPERATORS = new Map<string, 'and' | 'or' | 'not'>([
  ['AND', 'and'],
  ['OR', 'or'],
  ['NOT', 'not'],
]);
const WORD_END = /[\s()"]/;

function tokenize(query: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < query.length) {
    const ch = query[i]!;
    if (/\s/.test(ch)) {
      i++;
    } else if (ch === '(' || ch === ')') {
      tokens.push({ kind: ch === '(' ? 'lparen' : 'rparen', position: i, end: i + 1 });
      i++;
    } else if (ch === '"') {
      const close = query.indexOf('"', i + 1);
      if (close === -1) {
        tokens.push({ kind: 'error', message: 'unterminated quote', position: i, end: query.length });
        break;
      }
      const value = query.slice(i + 1, close);
      tokens.push(
        value.trim()
          ? { kind: 'phrase', value, position: i, end: close + 1 }
          : { kind: 'error', message: 'empty phrase', position: i, end: close + 1 },
      );
      i = close + 1;
    } else if (
      ch === '-' &&
      i + 1 < query.length &&
      !/\s/.test(query[i + 1]!) &&
      (i === 0 || /[\s(]/.test(query[i - 1]!))
    ) {
      // A leading minus negates what follows: -spam, -"phrase", -(a OR b).
      tokens.push({ kind: 'not', position: i, end: i + 1 });
      i++;
    } else {
      let end = i;
      while (end < query.length && !WORD_END.test(query[end]!)) end++;
      const word = query.slice(i, end);
      const operator = OPERATORS.get(word);
      tokens.push(operator ? { kind: operator, position: i, end } : { kind: 'word', value: word, position: i, end });
      i = end;
    }
  }
  return tokens;
}

/** Cuts an over-long query at a token boundary and repairs the cut end. */
function truncate(tokens: Token[]): { tokens: Token[]; truncated: boolean } {
  let terms = 0;
  let cut = tokens.length;
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.kind === 'word' || token.kind === 'phrase' || token.kind === 'error') terms++;
    if (token.end > MAX_QUERY_LENGTH || terms > MAX_QUERY_TERMS) {
      cut = i;
      break;
    }
  }
  if (cut === tokens.length) return { tokens, truncated: false };
  const kept = tokens.slice(0, cut);
  while (kept.length && ['and', 'or', 'not', 'lparen'].includes(kept[kept.length - 1]!.kind)) kept.pop();
  let depth = 0;
  for (const token of kept) depth += token.kind === 'lparen' ? 1 : token.kind === 'rparen' ? -1 : 0;
  const position = kept.at(-1)?.end ?? 0;
  for (; depth > 0; depth--) kept.push({ kind: 'rparen', position, end: position });
  return { tokens: kept, truncated: true };
}

function parseTokens(tokens: Token[], queryLength: number): QueryNode {
  let index = 0;
  const peek = () => tokens[index];
  const startsOperand = (token: Token | undefined) =>
    token !== undefined && ['word', 'phrase', 'lparen', 'not'].includes(token.kind);
  const missingOperand = (operator: Token): QuerySyntaxError => {
    const next = peek();
    const name = operator.kind === 'not' ? 'NOT' : operator.kind.toUpperCase();
    return new QuerySyntaxError(`dangling operator ${name}: nothing follows it`, next?.position ?? operator.position);
  };

  const flatten = (type: 'and' | 'or', children: QueryNode[]): QueryNode =>
    children.length === 1
      ? children[0]!
      : { type, children: children.flatMap((c) => (c.type === type ? c.children : [c])) };

  function parseOr(): QueryNode {
    const children = [parseAnd()];
    while (peek()?.kind === 'or') {
      const operator = tokens[index++]!;
      if (!startsOperand(peek())) throw missingOperand(operator);
      children.push(parseAnd());
    }
    return flatten('or', children);
  }

  function parseAnd(): QueryNode {
    const children = [parseUnary()];
    for (;;) {
      const next = peek();
      if (next?.kind === 'and') {
        index++;
        if (!startsOperand(peek())) throw missingOperand(next);
        children.push(parseUnary());
      } else if (startsOperand(next)) {
        children.push(parseUnary());
      } else {
        return flatten('and', children);
      }
    }
  }

  function parseUnary(): QueryNode {
    const token = peek();
    if (token?.kind === 'not') {
      index++;
      if (!startsOperand(peek())) throw missingOperand(token);
      return { type: 'not', child: parseUnary() };
    }
    return parsePrimary();
  }

  function parsePrimary(): QueryNode {
    const token = tokens[index++];
    if (!token) throw new QuerySyntaxError('query ends where a term was expected', queryLength);
    switch (token.kind) {
      case 'word':
      case 'phrase':
        return { type: 'term', value: token.value, phrase: token.kind === 'phrase', position: token.position };
      case 'lparen': {
        if (peek()?.kind === 'rparen') throw new QuerySyntaxError('empty parentheses', token.position);
        const inner = parseOr();
        if (peek()?.kind !== 'rparen') {
          throw new QuerySyntaxError("unbalanced parenthesis: this '(' is never closed", token.position);
        }
        index++;
        return inner;
      }
      case 'rparen':
        throw new QuerySyntaxError("unbalanced parenthesis: ')' without a matching '('", token.position);
      default:
        throw new QuerySyntaxError(`operator ${token.kind.toUpperCase()} has nothing on its left`, token.position);
    }
  }

  const tree = parseOr();
  const rest = peek();
  if (rest) {
    throw new QuerySyntaxError(
      rest.kind === 'rparen' ? "unbalanced parenthesis: ')' without a matching '('" : 'unexpected token',
      rest.position,
    );
  }
  return tree;
}

export interface ParsedQuery {
  query: string;
  tree: QueryNode;
  /** Distinct folded terms the query looks for (negated ones included). */
  terms: string[];
  truncated: boolean;
}

/** Error positions are offsets into `raw` exactly as the client sent it. */
export function parseQuery(raw: string): ParsedQuery {
  const query = raw.trim();
  if (!query) throw new QuerySyntaxError('empty query', 0);
  const nul = raw.indexOf('\0');
  if (nul !== -1) throw new QuerySyntaxError('the NUL character is not allowed', nul);
  const all = tokenize(raw);
  const { tokens, truncated } = truncate(all);
  const lexicalError = tokens.find((t) => t.kind === 'error');
  if (lexicalError?.kind === 'error') throw new QuerySyntaxError(lexicalError.message, lexicalError.position);
  if (tokens.length === 0) {
    throw new QuerySyntaxError(
      `the first term is longer than the ${MAX_QUERY_LENGTH}-character query limit`,
      all[0]?.position ?? 0,
    );
  }
  const tree = parseTokens(tokens, raw.length);
  return { query, tree, terms: [...new Set(termsOf(tree).map((t) => foldText(t.value)))], truncated };
}

export function termsOf(node: QueryNode): Extract<QueryNode, { type: 'term' }>[] {
  switch (node.type) {
    case 'term':
      return [node];
    case 'not':
      return termsOf(node.child);
    default:
      return node.children.flatMap(termsOf);
  }
}

/** Distinct folded terms not under a NOT (the ones a match can show): warnings and previews. */
export function positiveTerms(node: QueryNode): string[] {
  return [...new Set(collectPositive(node, false))];
}

function collectPositive(node: QueryNode, negated: boolean): string[] {
  switch (node.type) {
    case 'term':
      return negated ? [] : [foldText(node.value)];
    case 'not':
      return collectPositive(node.child, !negated);
    default:
      return node.children.flatMap((c) => collectPositive(c, negated));
  }
}

/** Evaluates the query against already-folded text: the reference semantics of every engine. */
export function matchesFolded(node: QueryNode, folded: string): boolean {
  switch (node.type) {
    case 'term':
      return folded.includes(foldText(node.value));
    case 'not':
      return !matchesFolded(node.child, folded);
    case 'and':
      return node.children.every((c) => matchesFolded(c, folded));
    case 'or':
      return node.children.some((c) => matchesFolded(c, folded));
  }
}

/** A canonical, readable rendering of the tree (stored as history's parsed_query). */
export function formatQuery(node: QueryNode): string {
  switch (node.type) {
    case 'term':
      return JSON.stringify(foldText(node.value));
    case 'not':
      return `NOT ${formatQuery(node.child)}`;
    default:
      return `(${node.children.map(formatQuery).join(node.type === 'and' ? ' AND ' : ' OR ')})`;
  }
}
