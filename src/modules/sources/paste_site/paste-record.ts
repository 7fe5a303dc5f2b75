import type { DocumentInput } from '../common/documents/document-store.ts';
import { isJsonObject, parseDate, recordFields, RecordError } from '../common/documents/record-fields.ts';

/**
 * Pastes, from the generic paste JSON Lines record and from Pastebin's scraping API
 * (docs/ingest.md "Paste sites"): both become the same stored paste.
 */

/** The largest paste content stored (Pastebin's own limit for its paid accounts). */
export const MAX_PASTE_BYTES = 10 << 20;

/** The hit fields of a paste, as stored (the snippet around the match is added per hit). */
export type PasteFields = {
  paste_key: string;
  /** Null for a raw paste file, which names no site. */
  site: string | null;
  title: string | null;
  syntax: string;
  user: string | null;
  /** Bytes, as the site reports them (else the content's UTF-8 length). */
  size: number;
  /** Null when the saved paste names none. */
  url: string | null;
  /** When the paste expires; null when it never does. */
  expire: string | null;
  /**
   * When it was posted (the record's `date`). Not named `date`: the hits endpoint sorts `date`
   * by the hit's own date, which here is when Dragnet stored the paste (`discovered_at`).
   */
  posted_at: string | null;
};

export const SITE = /^[a-z0-9][a-z0-9_.-]{0,63}$/;
// Keys name `<key>.txt` files beside a Pastebin list: nothing that could leave the folder.
const PASTEBIN_KEY = /^[A-Za-z0-9_-]{1,32}$/;

/**
 * The paste's document: found by its title and content; a paste of `site` is unique on its
 * key there.
 */
export function pasteDocument(fields: PasteFields, content: string): DocumentInput {
  const text = fields.title === null ? content : `${fields.title}\n${content}`;
  return { key: `${fields.site ?? 'unknown'}:${fields.paste_key}`, text, fields };
}

const contentSize = (content: string) => Buffer.byteLength(content, 'utf8');

/** An expiry: absent, empty or 0 is never; else a date. */
export function expiryOf(value: unknown): string | null {
  if (value === undefined || value === null || value === '' || value === 0 || value === '0') return null;
  const ms = parseDate(value);
  if (ms === null) throw new RecordError('expire must be an ISO 8601 date, epoch seconds, or 0 for never');
  return new Date(ms).toISOString();
}

export function sizeOf(value: unknown, content: string): number {
  if (value === undefined || value === null || value === '') return contentSize(content);
  const size = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0)
    throw new RecordError('size must be a number of bytes');
  return size;
}

/** A paste's syntax highlighting, lower-case; none is plain `text`, as Pastebin names it. */
export const syntaxOf = (value: string | null) => value?.trim().toLowerCase() ?? 'text';

/** One line of the generic paste JSON Lines: `{site, key, title, syntax, user, date, size, expire, url, content}`. */
export function genericPasteDocument(value: unknown): DocumentInput {
  if (!isJsonObject(value)) throw new RecordError('not a JSON object');
  const read = recordFields(value);
  const site = read.string('site').trim().toLowerCase();
  if (!SITE.test(site)) throw new RecordError('site must be a name such as pastebin or paste_ee');
  const content = read.string('content');
  if (contentSize(content) > MAX_PASTE_BYTES)
    throw new RecordError(`content is larger than ${MAX_PASTE_BYTES >> 20} MiB`);
  return pasteDocument(
    {
      paste_key: read.id('key'),
      site,
      title: read.optionalString('title'),
      syntax: syntaxOf(read.optionalString('syntax')),
      user: read.optionalString('user'),
      size: sizeOf(value.size, content),
      url: read.url('url'),
      expire: expiryOf(value.expire),
      posted_at: new Date(read.date('date')).toISOString(),
    },
    content,
  );
}

/** An entry of Pastebin's scraping list, every value a string: the paste's fields, before its content is known. */
export interface PastebinEntry {
  key: string;
  /** Epoch seconds, as listed: the collector's cursor compares them. */
  dateSeconds: number;
  fields: (content: string) => PasteFields;
}

/** Reads a scraping-list entry `{scrape_url, full_url, date, key, size, expire, title, syntax, user}`. */
export function pastebinEntry(value: unknown): PastebinEntry {
  if (!isJsonObject(value)) throw new RecordError('not a JSON object');
  const read = recordFields(value);
  const key = read.string('key');
  if (!PASTEBIN_KEY.test(key)) throw new RecordError('key must be letters, digits, - or _');
  const date = read.date('date');
  const url = read.optionalString('full_url') === null ? `https://pastebin.com/${key}` : read.url('full_url');
  const title = read.optionalString('title');
  const syntax = syntaxOf(read.optionalString('syntax'));
  const user = read.optionalString('user');
  const expire = expiryOf(value.expire);
  return {
    key,
    dateSeconds: Math.floor(date / 1000),
    fields: (content) => ({
      paste_key: key,
      site: 'pastebin',
      title,
      syntax,
      user,
      size: sizeOf(value.size, content),
      url,
      expire,
      posted_at: new Date(date).toISOString(),
    }),
  };
}

/** A scraping-list entry and its raw content as a document. */
export function pastebinDocument(entry: PastebinEntry, content: string): DocumentInput {
  if (contentSize(content) > MAX_PASTE_BYTES)
    throw new RecordError(`content is larger than ${MAX_PASTE_BYTES >> 20} MiB`);
  return pasteDocument(entry.fields(content), content);
}
