import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { jsonValues, orReason, type DocumentFormat, type DocumentRecord } from '../common/documents/document-ingest.ts';
import {
  firstOf,
  httpUrl,
  isJsonObject,
  RecordError,
  scrapedDate,
  type JsonObject,
} from '../common/documents/record-fields.ts';
import { plausibleTime } from '../common/ingest/timestamp.ts';
import { expiryOf, MAX_PASTE_BYTES, pasteDocument, SITE, sizeOf, syntaxOf } from './paste-record.ts';

/**
 * Pastes as paste-monitoring tools save them (docs/ingest.md "Paste sites"): pastepwn's and
 * pastebin scrapers' paste objects, PasteHunter's documents (`pastesite`, `pasteid`,
 * `raw_paste`), one a file or one a line; and folders of raw paste files named by their key.
 */

const NAMES = {
  body: ['body', 'content', 'raw_paste', 'raw', 'text', 'paste'],
  key: ['key', 'paste_key', 'pasteid', 'paste_id', 'id'],
  site: ['site', 'pastesite', 'paste_site'],
  title: ['title', 'name'],
  user: ['user', 'author', 'username'],
  date: ['date', 'created', 'timestamp', 'created_at', 'posted_at', '@timestamp'],
  syntax: ['syntax', 'language', 'lang'],
  url: ['full_url', 'url', 'scrape_url', 'link'],
} as const;

// The sites' own names, as the scraping collector and our JSONL record call them.
const SITE_OF_HOST: Record<string, string> = {
  'pastebin.com': 'pastebin',
  'scrape.pastebin.com': 'pastebin',
  'paste.ee': 'paste_ee',
  'rentry.co': 'rentry',
  'rentry.org': 'rentry',
};

/** A site named by the record (`pastebin.com` or `pastebin`) or its URL's host; null when neither. */
function siteOf(record: JsonObject, url: string | null): string | null {
  const named =
    firstOf(record, NAMES.site)
      ?.toLowerCase()
      .replace(/^https?:\/\//, '')
      .replace(/^www\./, '')
      .replace(/\/.*$/, '') ?? null;
  const host = named ?? (url === null ? null : new URL(url).hostname.toLowerCase().replace(/^www\./, ''));
  if (host === null) return null;
  const site = SITE_OF_HOST[host] ?? host;
  return SITE.test(site) ? site : null;
}

/** One saved paste object and where it is. */
function savedPasteRecord(value: unknown, location: string): DocumentRecord {
  const warnings: string[] = [];
  const record = orReason(() => {
    if (!isJsonObject(value)) throw new RecordError('not a JSON object');
    const body = NAMES.body.map((name) => value[name]).find((item) => typeof item === 'string');
    if (typeof body !== 'string' || body === '')
      throw new RecordError(`the paste has no body (${NAMES.body.join(', ')})`);
    if (Buffer.byteLength(body) > MAX_PASTE_BYTES)
      throw new RecordError(`content is larger than ${MAX_PASTE_BYTES >> 20} MiB`);
    const key = firstOf(value, NAMES.key);
    if (key === null) throw new RecordError(`the paste has no key (${NAMES.key.join(', ')})`);
    const url = httpUrl(firstOf(value, NAMES.url));
    const site = siteOf(value, url);
    if (site === null) warnings.push('paste site unknown (neither named nor in a URL)');
    const dateName = NAMES.date.find((name) => value[name] !== undefined && value[name] !== null && value[name] !== '');
    if (dateName === undefined) warnings.push('paste date missing');
    const warn = (reason: string) => warnings.push(reason);
    const ms =
      dateName === undefined
        ? null
        : plausibleTime(scrapedDate(value[dateName], warn, 'paste date'), warn, 'paste date');
    return pasteDocument(
      {
        paste_key: key,
        site,
        title: firstOf(value, NAMES.title),
        syntax: syntaxOf(firstOf(value, NAMES.syntax)),
        user: firstOf(value, NAMES.user),
        size: sizeOf(value.size, body),
        url,
        expire: expiryOrNull(value.expire, warn),
        posted_at: ms === null ? null : new Date(ms).toISOString(),
      },
      body,
    );
  });
  return { location, record, warnings };
}

/** An expiry, or null with a warning when it is not one (a saved paste is kept without it). */
function expiryOrNull(value: unknown, warn: (reason: string) => void): string | null {
  try {
    return expiryOf(value);
  } catch (error) {
    if (!(error instanceof RecordError)) throw error;
    warn('paste expiry is not a date');
    return null;
  }
}

// A paste with its metadata in one object stays far below this, as does a file of them.
const MAX_SAVED_BYTES = 256 << 20;
const JSON_FILES = /\.(json|jsonl|ndjson)$/i;

/** `--format saved`: paste objects as monitoring tools save them, one a file or one a line. */
export const savedPastes: DocumentFormat = {
  writtenBy: 'paste monitors (pastepwn, PasteHunter, pastebin scrapers): one paste JSON object a file or a line',
  accepts: (file) => JSON_FILES.test(file),
  detect: (head) => /^\s*[[{]/.test(head) && new RegExp(`"(?:${NAMES.body.join('|')})"\\s*:`).test(head),
  read: jsonValues(function* (value, location) {
    yield savedPasteRecord(value, location);
  }, MAX_SAVED_BYTES),
};

// A folder holding a Pastebin list keeps its pastes as <key>.txt beside it: read through the list.
const folderHasJson = new Map<string, boolean>();
function besideJson(file: string): boolean {
  const folder = path.dirname(file);
  let has = folderHasJson.get(folder);
  if (has === undefined) {
    has = readdirSync(folder).some((name) => name.toLowerCase().endsWith('.json'));
    folderHasJson.set(folder, has);
  }
  return has;
}

/**
 * `--format raw`: raw paste files (a paste's text as the site serves it raw), the file name
 * without extension its key. The file's time is when it was saved, not posted: the paste date
 * is null (with a warning), as are its site and URL.
 */
export const rawPastes: DocumentFormat = {
  writtenBy:
    'paste monitors saving raw pastes (pastepwn SaveFileAction, pastebin scrapers): one text file a paste, named by its key',
  accepts: (file) => !JSON_FILES.test(file) && !(file.toLowerCase().endsWith('.txt') && besideJson(file)),
  detect: (head) => head.trim() !== '' && !/^\s*[[{]/.test(head) && !head.includes('\0'),
  async *read(input) {
    const name = path.basename(input).replace(/\.[a-z0-9]{1,5}$/i, '');
    const size = statSync(input).size;
    if (size > MAX_PASTE_BYTES) {
      yield { location: 'file', record: `larger than ${MAX_PASTE_BYTES >> 20} MiB` };
      return;
    }
    const body = readFileSync(input, 'utf8').replace(/^\uFEFF/, '');
    const record =
      body.trim() === ''
        ? 'empty paste'
        : pasteDocument(
            {
              paste_key: name,
              site: null,
              title: null,
              syntax: 'text',
              user: null,
              size,
              url: null,
              expire: null,
              posted_at: null,
            },
            body,
          );
    yield {
      location: 'file',
      record,
      warnings: ['paste date unknown (a raw paste file; its file time is when it was saved)'],
    };
  },
};
