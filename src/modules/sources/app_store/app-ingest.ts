import path from 'node:path';
import { readJsonDocument } from '../documents/document-ingest.ts';
import {
  expandInputs,
  failInput,
  IngestError,
  inputLine,
  MAX_LINE_BYTES,
  newInputResult,
  openInput,
  readLines,
  reject,
  reportInputs,
  type IngestProgress,
  type InputResult,
} from '../ingest/ingest-kit.ts';
import type { Ingester, SourceContext } from '../source.ts';
import { parseItunesResult, parsePlayApp, type AppListing, type ParsedListing } from './app-listing.ts';
import { writeListings } from './app-store.ts';

/** `dragnet ingest app_store` (docs/ingest.md "App listings"). */

// An iTunes Search response holds at most 200 results of a few KB each; a Lookup of many ids
// is not much larger. Read whole up to this, so memory stays bounded.
export const ITUNES_MAX_BYTES = 32 << 20;
// Listings per transaction: a crash loses at most one uncommitted batch, never part of one.
const BATCH = 500;

interface ReadListing {
  location: string;
  listing: ParsedListing;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** An iTunes Search or Lookup API response: `{"resultCount": N, "results": [...]}`. */
async function* itunesListings(input: string, progress?: IngestProgress): AsyncGenerator<ReadListing> {
  const response = await readJsonDocument(input, ITUNES_MAX_BYTES, progress);
  if (!isObject(response) || !Array.isArray(response.results)) throw new IngestError(input, 'document', 'not an iTunes Search/Lookup response: no "results" array');
  for (const [i, result] of response.results.entries()) yield { location: `result ${i + 1}`, listing: parseItunesResult(result) };
}

/** One google-play-scraper app a line; blank lines are skipped. */
async function* playListings(input: string, progress?: IngestProgress): AsyncGenerator<ReadListing> {
  const { stream, size } = openInput(input);
  if (size !== null) progress?.start(input, size, 'bytes');
  try {
    for await (const { line, number } of readLines(stream, (bytes) => progress?.advance(bytes))) {
      if (line.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        // readLines cut the line at MAX_LINE_BYTES: say so rather than blame the JSON.
        const cut = Buffer.byteLength(line) >= MAX_LINE_BYTES - 3;
        yield { location: `line ${number}`, listing: cut ? `longer than ${MAX_LINE_BYTES >> 20} MiB (a line is read up to that)` : 'not valid JSON' };
        continue;
      }
      yield { location: `line ${number}`, listing: parsePlayApp(value) };
    }
  } finally {
    if (input !== '-') stream.destroy();
  }
}

const PLAY_FILES = new Set(['.jsonl', '.ndjson']);

/** `auto` goes by the file name: JSON Lines files are Google Play apps, anything else (and `-`) an iTunes response. */
const formatOf = (input: string, format: string) => (format !== 'auto' ? format : PLAY_FILES.has(path.extname(input).toLowerCase()) ? 'play' : 'itunes');

const ACCEPTS: Record<string, (file: string) => boolean> = {
  auto: (file) => ['.json', ...PLAY_FILES].includes(path.extname(file).toLowerCase()),
  itunes: (file) => path.extname(file).toLowerCase() === '.json',
  play: (file) => PLAY_FILES.has(path.extname(file).toLowerCase()),
};

async function ingestInput(context: SourceContext, input: string, format: string, progress?: IngestProgress): Promise<InputResult> {
  const result = newInputResult(input);
  // One time for the whole input: what it brings is new to rules from then on.
  const source = { name: input === '-' ? 'stdin' : path.basename(input), discoveredAt: context.clock.now().getTime() };
  let batch: AppListing[] = [];
  const flush = async () => {
    const counts = await writeListings(context, batch, source);
    result.added += counts.added;
    result.duplicates += counts.duplicates;
    batch = [];
  };
  try {
    const listings = formatOf(input, format) === 'play' ? playListings(input, progress) : itunesListings(input, progress);
    for await (const { location, listing } of listings) {
      if (listing === null) continue;
      if (typeof listing === 'string') {
        reject(result, location, listing);
        continue;
      }
      result.records++;
      batch.push(listing);
      if (batch.length >= BATCH) await flush();
    }
    await flush();
  } catch (error) {
    failInput(result, error);
  }
  progress?.finish(inputLine('apps', result));
  return result;
}

export const appStoreIngester: Ingester = {
  name: 'app_store',
  description: 'app listings: iTunes Search/Lookup API responses (.json) and google-play-scraper apps as JSON Lines (.jsonl), files, folders or - (stdin)',
  formats: ['auto', 'itunes', 'play'],
  async run(context, inputs, { format, progress }) {
    const results: InputResult[] = [];
    for (const input of expandInputs(inputs, ACCEPTS[format] ?? ACCEPTS.auto!)) results.push(await ingestInput(context, input, format, progress));
    return reportInputs('apps', results);
  },
};
