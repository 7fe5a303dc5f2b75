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
  if (shortcode.length > MAX_SHORTCODE) return { kind: 'bad', reason: `the shortcode is longer than ${MAX_SHORTCODE} characters` };
  if (PSEUDO_TARGETS.has(targetUrl)) return { kind: 'pseudo', shortcode, target: targetUrl as 'notfound' | 'blocked' };
  if (targetUrl === '') return { kind: 'bad', reason: 'the long URL is empty' };
  if (targetUrl.length > MAX_TARGET_URL) return { kind: 'bad', reason: `the long URL is longer than ${MAX_TARGET_URL} characters` };
  const target = URL.canParse(targetUrl) ? new URL(targetUrl) : null;
  if (!target?.hostname) return { kind: 'bad', reason: 'the long URL is not an absolute URL with a host' };
  return { kind: 'link', shortcode, targetUrl, target };
}
