import { plausibleTime } from '../../common/ingest/timestamp.ts';
export { IngestError, type Rejection } from '../../common/ingest/ingest-kit.ts';

/** A URL starting exactly at lastIndex (sticky): tried only where a "://" makes one possible. */
const URL_AT = /\bhttps?:\/\/[^\s<>"'`)\]}]+/iuy;

const TRAILING_PUNCTUATION = '.,;:!?';

/**
 * URLs written in the text, trailing punctuation trimmed. Every URL has its "://" 4 or 5
 * characters in ("http", "https"), so the pattern is tried only there: scanning every position
 * of every ingested message for it took longer than parsing the message's JSON.
 */
export function linksInText(text: string): string[] {
  const links: string[] = [];
  let from = 0;
  for (
    let slashes = text.indexOf('://', 4);
    slashes !== -1;
    slashes = text.indexOf('://', Math.max(from + 4, slashes + 3))
  ) {
    let match: RegExpExecArray | null = null;
    for (const start of [slashes - 5, slashes - 4]) {
      if (start < from) continue;
      URL_AT.lastIndex = start;
      match = URL_AT.exec(text);
      if (match) break;
    }
    if (!match) continue;
    const url = match[0];
    let end = url.length;
    while (end > 0 && TRAILING_PUNCTUATION.includes(url[end - 1]!)) end--;
    links.push(end === url.length ? url : url.slice(0, end));
    from = URL_AT.lastIndex;
  }
  return links;
}

/** A value of the record at `location` was not stored, for `reason` (an edit date in the future). */
export type WarnAt = (location: string, reason: string) => void;

/** `ms` when plausible (plausibleTime), else null and why; the reason a message's own date rejects it. */
export function plausibleOrWhy(ms: number | null, what: string): { ms: number | null; why: string | null } {
  let why: string | null = null;
  const checked = plausibleTime(ms, (reason) => (why = reason), what);
  return { ms: checked, why };
}
