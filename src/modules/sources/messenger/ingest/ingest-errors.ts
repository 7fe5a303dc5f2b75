import { plausibleTime } from '../../common/ingest/timestamp.ts';
export { IngestError, type Rejection } from '../../common/ingest/ingest-kit.ts';

const URL_PATTERN = /\bhttps?:\/\/[^\s<>"'`)\]}]+/giu;

/** URLs written in the text, trailing punctuation trimmed. */
export function linksInText(text: string): string[] {
  return [...text.matchAll(URL_PATTERN)].map((m) => m[0].replace(/[.,;:!?]+$/u, ''));
}

/** A value of the record at `location` was not stored, for `reason` (an edit date in the future). */
export type WarnAt = (location: string, reason: string) => void;

/** `ms` when plausible (plausibleTime), else null and why; the reason a message's own date rejects it. */
export function plausibleOrWhy(ms: number | null, what: string): { ms: number | null; why: string | null } {
  let why: string | null = null;
  const checked = plausibleTime(ms, (reason) => (why = reason), what);
  return { ms: checked, why };
}
