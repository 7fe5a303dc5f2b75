import { foldText } from './query-language.ts';

const ELLIPSIS = '…';

/**
 * `contextChars` characters of text around the first match of any of the terms, cut on
 * character (code point) boundaries, with an ellipsis where the text was cut. The match is
 * searched in the folded text and mapped back to the original, since lower-casing can change
 * lengths (İ becomes two code units).
 */
export function textPreview(text: string, terms: string[], contextChars: number): string {
  const chars = [...text];
  if (chars.length <= contextChars) return text;

  // folded[i] comes from chars[origin[i]]
  let folded = '';
  const origin: number[] = [];
  chars.forEach((ch, index) => {
    const f = foldText(ch);
    folded += f;
    for (let k = 0; k < f.length; k++) origin.push(index);
  });

  let start = -1;
  let length = 0;
  for (const term of terms) {
    const at = folded.indexOf(term);
    if (at !== -1 && (start === -1 || at < start)) {
      start = at;
      length = term.length;
    }
  }
  if (start === -1) return chars.slice(0, contextChars).join('') + ELLIPSIS;

  const matchStart = origin[start]!;
  const matchEnd = origin[start + length - 1]! + 1;
  const matchChars = matchEnd - matchStart;
  const spare = Math.max(0, contextChars - matchChars);
  let from = Math.max(0, matchStart - Math.floor(spare / 2));
  const to = Math.min(chars.length, Math.max(from + contextChars, matchEnd));
  from = Math.max(0, Math.min(from, to - Math.max(contextChars, matchChars)));
  return (from > 0 ? ELLIPSIS : '') + chars.slice(from, to).join('') + (to < chars.length ? ELLIPSIS : '');
}
