import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { jsonLines, orReason, readJsonDocument, type DocumentFormat } from '../common/documents/document-ingest.ts';
import { isJsonObject, RecordError } from '../common/documents/record-fields.ts';
import { IngestError } from '../common/ingest/ingest-kit.ts';
import { genericPasteDocument, MAX_PASTE_BYTES, pastebinDocument, pastebinEntry } from './paste-record.ts';

/** `--format jsonl`: the generic paste record, one a line. */
export const pasteJsonLines: DocumentFormat = {
  writtenBy: 'Dragnet paste JSON Lines (docs/ingest.md)',
  detect: (head) => /^\s*\{[^\n]*"site"\s*:/.test(head) && /^\s*\{[^\n]*"content"\s*:/.test(head),
  accepts: (file) => /\.(jsonl|ndjson)$/i.test(file),
  read: jsonLines(genericPasteDocument),
};

// A list holds at most 250 entries; with their content inline that is still far below this.
const MAX_LIST_BYTES = 256 << 20;

/**
 * A paste's content for a list entry: its `content` field when the list carries one, else the
 * raw file `<key>.txt` in the list's folder (as saved from api_scrape_item.php).
 */
function contentOf(entry: unknown, key: string, folder: string | null): string {
  if (isJsonObject(entry) && entry.content !== undefined && entry.content !== null) {
    if (typeof entry.content !== 'string') throw new RecordError('content must be a string');
    return entry.content;
  }
  const file = folder === null ? null : path.join(folder, `${key}.txt`);
  const size = file === null ? undefined : statSync(file, { throwIfNoEntry: false })?.size;
  if (file === null || size === undefined)
    throw new RecordError(`no content: neither a content field nor ${key}.txt beside the list`);
  if (size > MAX_PASTE_BYTES) throw new RecordError(`${key}.txt is larger than ${MAX_PASTE_BYTES >> 20} MiB`);
  return readFileSync(file, 'utf8');
}

/**
 * `--format pastebin`: a saved api_scraping.php list (a JSON array, every value a string). Each
 * entry's content is its added `content` field or `<key>.txt` beside the list; the `.txt` files
 * of a folder are read through their list, never on their own.
 */
export const pastebinList: DocumentFormat = {
  writtenBy: 'Pastebin scraping API api_scraping.php (saved list, every version)',
  // Monitors that add the body under another name than `content` are read as saved pastes.
  detect: (head) =>
    /^\s*\[/.test(head) && head.includes('"scrape_url"') && !/"(?:body|raw_paste|raw|text)"\s*:/.test(head),
  accepts: (file) => file.toLowerCase().endsWith('.json'),
  async *read(input, progress) {
    const list = await readJsonDocument(input, MAX_LIST_BYTES, progress);
    if (!Array.isArray(list))
      throw new IngestError(input, 'top level', 'not a Pastebin scraping list: not a JSON array');
    const folder = input === '-' ? null : path.dirname(input);
    for (const [index, value] of list.entries()) {
      yield {
        location: `record ${index + 1}`,
        record: orReason(() => {
          const entry = pastebinEntry(value);
          return pastebinDocument(entry, contentOf(value, entry.key, folder));
        }),
      };
    }
  },
};
