// The server's query language module is pure (no Node imports): highlighting folds text and picks
// terms exactly as the search matched them.
import {
  foldText,
  positiveTerms,
  type QueryNode,
} from '../../../../src/modules/sources/common/query/query-language.ts';

export type Segment = { text: string; match: boolean };

/** The terms a result can show: those not under a NOT, folded (lower-cased) as the server does. */
export function highlightTerms(parsed: unknown): string[] {
  return positiveTerms(parsed as QueryNode).filter((term) => term.length > 0);
}

/**
 * Splits `text` into runs that match one of the (folded) terms and runs that do not, comparing
 * folded text but cutting the original, so a match keeps its case and script.
 */
export function highlight(text: string, terms: string[]): Segment[] {
  // Folding one code point at a time gives the same string as folding the whole (the sigma fold
  // undoes the only context-dependent lower-casing), and tells where each folded unit came from.
  let folded = '';
  const origin: number[] = [];
  for (let index = 0; index < text.length;) {
    const char = String.fromCodePoint(text.codePointAt(index)!);
    const part = foldText(char);
    folded += part;
    for (let unit = 0; unit < part.length; unit++) origin.push(index);
    index += char.length;
  }
  origin.push(text.length);

  const ranges: [number, number][] = [];
  for (const term of terms) {
    for (let at = folded.indexOf(term); at !== -1; at = folded.indexOf(term, at + 1)) {
      const end = at + term.length;
      // The end is where the code point after the last folded unit starts.
      let originalEnd = origin[end]!;
      if (originalEnd === origin[end - 1]) originalEnd = nextCodePoint(text, originalEnd);
      ranges.push([origin[at]!, originalEnd]);
    }
  }
  ranges.sort((a, b) => a[0] - b[0]);

  // Overlapping or touching matches make one mark.
  const segments: Segment[] = [];
  let cursor = 0;
  for (const [start, end] of ranges) {
    const last = segments.at(-1);
    if (last?.match && start <= cursor) {
      if (end > cursor) {
        last.text += text.slice(cursor, end);
        cursor = end;
      }
      continue;
    }
    if (start > cursor) segments.push({ text: text.slice(cursor, start), match: false });
    segments.push({ text: text.slice(start, end), match: true });
    cursor = end;
  }
  if (cursor < text.length) segments.push({ text: text.slice(cursor), match: false });
  return segments;
}

function nextCodePoint(text: string, index: number): number {
  const code = text.codePointAt(index);
  return code === undefined ? text.length : index + (code > 0xffff ? 2 : 1);
}
