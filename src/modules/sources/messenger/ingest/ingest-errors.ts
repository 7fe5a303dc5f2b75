import { plausibleTime } from '../../common/ingest/timestamp.ts';
export { IngestError, type Rejection } from '../../common/ingest/ingest-kit.ts';

const URL_PATTERN = /\bhttps?:\/\/[^\s<>"'`)\]}]+/giu;

const TRAILING_PUNCTUATION = '.,;:!?';

/** URLs written in the text, trailing punctuation trimmed. */
export function linksInText(text: string): string[] {
  const links: string[] = [];
  // Called on every ingested message: one exec loop, no match array, a slice only when trimming.
  URL_PATTERN.lastIndex = 0;
  for (let match = URL_PATTERN.exec(text); match; match = URL_PATTERN.exec(text)) {
    const url = match[0];
    let end = url.length;
    while (end > 0 && TRAILING_PUNCTUATION.includes(url[end - 1]!)) end--;
    links.push(end === url.length ? url : url.slice(0, end));
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
