export { IngestError, type Rejection } from '../../common/ingest/ingest-kit.ts';

const URL_PATTERN = /\bhttps?:\/\/[^\s<>"'`)\]}]+/giu;

/** URLs written in the text, trailing punctuation trimmed. */
export function linksInText(text: string): string[] {
  return [...text.matchAll(URL_PATTERN)].map((m) => m[0].replace(/[.,;:!?]+$/u, ''));
}
