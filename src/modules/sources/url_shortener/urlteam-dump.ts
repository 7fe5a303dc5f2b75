import { isUtf8 } from 'node:buffer';
import { withoutNul } from '../common/ingest/ingest-kit.ts';

/**
 * URLTeam dumps (terroroftinytown releases, docs/ingest.md "URL-shortener dumps"), one line at
 * a time: BEACON meta lines (`#FORMAT: BEACON`, `#PREFIX: https://v.gd/`, `#HOMEPAGE:`,
 * `#TIMESTAMP:`), other `#` comments, blank lines, and `shortcode|long_url` links. A long URL
 * may itself hold `|`, spaces or non-ASCII characters, so a link is split on its first `|`
 * only and the URL is kept as written. `notfound` and `blocked` are the crawler's pseudo-targets
 * (no such code, a code the service disabled): no link, and no error either.
 */
export type DumpLine =
  | { kind: 'meta'; field: string; value: string }
  | { kind: 'link'; shortcode: string; targetUrl: string; target: URL }
  | { kind: 'pseudo'; shortcode: string; target: 'notfound' | 'blocked' }
  | { kind: 'bad'; reason: string };

// BEACON meta fields are upper-case letters (the BEACON spec's METAFIELD).
const META = /^#([A-Z]+):\s*(.*?)\s*$/;
const PSEUDO_TARGETS = new Set(['notfound', 'blocked']);

/** Shortcodes are short; a longer one is no shortcode (and would not fit a unique index everywhere). */
export const MAX_SHORTCODE = 256;
/** Long URLs longer than this are refused: a line cut at the reader's 1 MiB limit is no URL. */
export const MAX_TARGET_URL = 65_536;

/** What one line of a dump is, or null for a blank line or a comment. */
export function parseDumpLine(text: string): DumpLine | null {
  const line = text.trim();
  if (line === '') return null;
  if (line.startsWith('#')) {
    const meta = META.exec(line);
    return meta ? { kind: 'meta', field: meta[1]!, value: meta[2]! } : null;
  }
  const bar = line.indexOf('|');
  if (bar === -1) return { kind: 'bad', reason: 'expected shortcode|long_url' };
  const shortcode = line.slice(0, bar).trim();
  const targetUrl = line.slice(bar + 1).trim();
  if (shortcode === '') return { kind: 'bad', reason: 'the shortcode is empty' };
  if (shortcode.length > MAX_SHORTCODE)
    return { kind: 'bad', reason: `the shortcode is longer than ${MAX_SHORTCODE} characters` };
  if (PSEUDO_TARGETS.has(targetUrl)) return { kind: 'pseudo', shortcode, target: targetUrl as 'notfound' | 'blocked' };
  if (targetUrl === '') return { kind: 'bad', reason: 'the long URL is empty' };
  if (targetUrl.length > MAX_TARGET_URL)
    return { kind: 'bad', reason: `the long URL is longer than ${MAX_TARGET_URL} characters` };
  const target = URL.canParse(targetUrl) ? new URL(targetUrl) : null;
  if (!target?.hostname) return { kind: 'bad', reason: 'the long URL is not an absolute URL with a host' };
  return { kind: 'link', shortcode, targetUrl, target };
}

/** How many bytes the well-formed UTF-8 sequence at `at` takes (RFC 3629: no overlong form, surrogate or code point past U+10FFFF), or 0. */
function utf8SequenceAt(bytes: Buffer, at: number): number {
  const first = bytes[at]!;
  if (first < 0x80) return 1;
  const continues = (offset: number, low = 0x80, high = 0xbf) => {
    const byte = bytes[at + offset];
    return byte !== undefined && byte >= low && byte <= high;
  };
  if (first >= 0xc2 && first <= 0xdf) return continues(1) ? 2 : 0;
  if (first >= 0xe0 && first <= 0xef) {
    const second = first === 0xe0 ? continues(1, 0xa0) : first === 0xed ? continues(1, 0x80, 0x9f) : continues(1);
    return second && continues(2) ? 3 : 0;
  }
  if (first >= 0xf0 && first <= 0xf4) {
    const second = first === 0xf0 ? continues(1, 0x90) : first === 0xf4 ? continues(1, 0x80, 0x8f) : continues(1);
    return second && continues(2) && continues(3) ? 4 : 0;
  }
  return 0;
}

/**
 * A dump line's text without losing a byte. URLTeam keeps each URL in the bytes the shortener
 * answered (latin-1, cp437, Shift JIS…), so a line is often no UTF-8: its UTF-8 sequences are
 * read as text and every other byte is percent-encoded (0xE9 → `%E9`), as a browser would send
 * it, never replaced with U+FFFD. A URL's meaning is kept (a server gets the same bytes), and
 * its bytes are recovered by percent-decoding. U+0000 is removed, as from every ingest.
 */
export function losslessText(bytes: Buffer): string {
  if (isUtf8(bytes)) return withoutNul(bytes.toString('utf8'));
  let text = '';
  let start = 0;
  for (let at = 0; at < bytes.length;) {
    const length = utf8SequenceAt(bytes, at);
    if (length > 0) {
      at += length;
      continue;
    }
    text += `${bytes.toString('utf8', start, at)}%${bytes[at]!.toString(16).toUpperCase().padStart(2, '0')}`;
    start = ++at;
  }
  return withoutNul(text + bytes.toString('utf8', start));
}
