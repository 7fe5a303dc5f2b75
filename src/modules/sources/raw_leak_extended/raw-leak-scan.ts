import type { Readable } from 'node:stream';
import { maskPassword } from '../common/leaks/credential.ts';
import { BLOCK } from './raw-leak-store.ts';

/**
 * The full scan of raw leak files (the async part of the raw leak extended source): a stream
 * of 1 MiB blocks, searched as Latin-1 text so that every byte is one character. A block
 * without a match costs one regular-expression search; lines are counted only in the blocks
 * that match, from the line index the file got when it was stored.
 */
export type TermType = 'domain' | 'email' | 'ip' | 'phone' | 'username' | 'keyword';

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The search for one term. A keyword is any substring; the other kinds must stand alone: not
 * inside a longer name, number or address (a domain may follow a dot: its subdomains count).
 * Case-insensitive search folds ASCII letters only, as the text is searched byte by byte.
 */
export function termPattern(term: string, termType: TermType, caseSensitive: boolean): RegExp {
  const bytes = escapeRegExp(Buffer.from(term, 'utf8').toString('latin1'));
  const flags = caseSensitive ? 'g' : 'gi';
  switch (termType) {
    case 'keyword':
      return new RegExp(bytes, flags);
    case 'domain':
      return new RegExp(`(?<![A-Za-z0-9-])${bytes}(?![A-Za-z0-9-])`, flags);
    case 'ip':
    case 'phone':
      return new RegExp(`(?<![0-9.])${bytes}(?![0-9])`, flags);
    default:
      return new RegExp(`(?<![A-Za-z0-9._%+-])${bytes}(?![A-Za-z0-9_-])`, flags);
  }
}

/**
 * A matching line as a hit shows it: cut to 500 characters, and in a short `a:b`, `a;b:c` or
 * `a|b|c` record (2 to 4 fields, no white space) whose last field is not the term, that last
 * field (the password) masked.
 */
export function presentLine(line: string, term: string): string {
  const text = line.replace(/\r$/, '');
  const fields = text.split(/([:;|\t])/);
  const values = fields.filter((_, i) => i % 2 === 0);
  let shown = text;
  const isRecord =
    values.length >= 2 && values.length <= 4 && values.every((value) => value !== '' && !/\s/.test(value));
  if (isRecord && !values[values.length - 1]!.toLowerCase().includes(term.toLowerCase())) {
    fields[fields.length - 1] = maskPassword(values[values.length - 1]!);
    shown = fields.join('');
  }
  return shown.length > 500 ? `${shown.slice(0, 500)}…` : shown;
}

export interface LineMatch {
  line: number;
  text: string;
}

/**
 * Scans one stored file; `onMatch` hears each matching line once, in file order. `lineIndex[k]`
 * is the number of lines before byte k × BLOCK.
 */
export async function scanStream(
  stream: Readable,
  lineIndex: number[],
  pattern: RegExp,
  onMatch: (match: LineMatch) => void,
  onBytes?: (bytes: number) => void,
): Promise<void> {
  let carry = '';
  let chunkStart = 0;
  // Lines before the previous block's body, and that body: a block that is not on a block
  // boundary (or beyond the index) counts its lines from them.
  let previous = { linesBefore: 0, body: '' };
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    const text = chunk.toString('latin1');
    const first = text.indexOf('\n');
    onBytes?.(chunk.length);
    if (first === -1) {
      carry += text;
      chunkStart += chunk.length;
      continue;
    }
    // Lines before this block: the carry holds no newline, so its line starts the block's count.
    const indexed = chunkStart % BLOCK === 0 ? lineIndex[chunkStart / BLOCK] : undefined;
    const linesBefore = indexed ?? previous.linesBefore + countNewlines(previous.body);
    // The line the previous block left open is searched on its own; the rest of the block is
    // searched in place (a slice), never copied into a joined string.
    scanText(`${carry}${text.slice(0, first + 1)}`, linesBefore, pattern, onMatch);
    const last = text.lastIndexOf('\n');
    const body = text.slice(first + 1, last + 1);
    scanText(body, linesBefore + 1, pattern, onMatch);
    carry = text.slice(last + 1);
    previous = { linesBefore: linesBefore + 1, body };
    chunkStart += chunk.length;
  }
  if (carry) scanText(`${carry}\n`, previous.linesBefore + countNewlines(previous.body), pattern, onMatch);
}

function countNewlines(text: string): number {
  let count = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count++;
  return count;
}

function scanText(text: string, linesBefore: number, pattern: RegExp, onMatch: (match: LineMatch) => void): void {
  pattern.lastIndex = 0;
  let line = linesBefore;
  let counted = 0;
  for (let found = pattern.exec(text); found; found = pattern.exec(text)) {
    const start = text.lastIndexOf('\n', found.index) + 1;
    const end = text.indexOf('\n', found.index);
    for (let at = text.indexOf('\n', counted); at !== -1 && at < start; at = text.indexOf('\n', at + 1)) {
      line++;
      counted = at + 1;
    }
    onMatch({ line: line + 1, text: Buffer.from(text.slice(start, end), 'latin1').toString('utf8') });
    // One hit per line, however often the term occurs in it.
    pattern.lastIndex = end + 1;
  }
}
