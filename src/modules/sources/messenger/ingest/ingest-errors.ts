export { IngestError, type Rejection } from '../../ingest/ingest-kit.ts';

/** "line L, column C" for a JSON.parse failure, from the offset V8 reports. */
export function jsonErrorLocation(text: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const match = /position (\d+)/.exec(message);
  // "Unexpected end of JSON input" carries no position: the problem is at the end.
  const offset = match ? Number(match[1]) : text.length;
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  return `line ${line}, column ${column}`;
}

const URL_PATTERN = /\bhttps?:\/\/[^\s<>"'`)\]}]+/giu;

/** URLs written in the text, trailing punctuation trimmed. */
export function linksInText(text: string): string[] {
  return [...text.matchAll(URL_PATTERN)].map((m) => m[0].replace(/[.,;:!?]+$/u, ''));
}
