import type { Readable } from 'node:stream';
import { maskPassword } from '../leaks/credential.ts';
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
  const isRecord = values.length >= 2 && values.length <= 4 && values.every((value) => value !== '' && !/\s/.test(value));
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
export async function scanStream(stream: Readable, lineIndex: number[], pattern: RegExp, onMatch: (match: LineMatch) => void, onBytes?: (bytes: number) => void): Promise<void> {
  let carry = '';
  let chunkStart = 0;
  let previous = { linesBefore: 0, searchable: '' };
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    const text = carry + chunk.toString('latin1');
    const lastNewline = text.lastIndexOf('\n');
    const searchable = lastNewline === -1 ? '' : text.slice(0, lastNewline + 1);
    // Lines before `text`: the carry holds no newline, so it is the count before this block,
    // from the index; a block the stream did not cut on a block boundary is counted instead.
    const indexed = chunkStart % BLOCK === 0 ? lineIndex[chunkStart / BLOCK] : undefined;
    const linesBefore = indexed ?? previous.linesBefore + countNewlines(previous.searchable);
    scanText(searchable, linesBefore, pattern, onMatch);
    carry = lastNewline === -1 ? text : text.slice(lastNewline + 1);
    previous = { linesBefore, searchable };
    chunkStart += chunk.length;
    onBytes?.(chunk.length);
  }
  if (carry) scanText(`${carry}\n`, previous.linesBefore + countNewlines(previous.searchable), pattern, onMatch);
}

function countNewlines(text: string): number {
  let count = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count++;
  return count;
}

function scanText(text: string, linesBefore: number, pattern: RegExp, onMatch: (match: LineMatch) => void): void {
  pattern.lastIndex = 0;
  if (!pattern.test(text)) return;
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
