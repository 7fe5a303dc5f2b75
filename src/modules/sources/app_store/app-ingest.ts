import path from 'node:path';
import { readJsonDocument } from '../common/documents/document-ingest.ts';
import {
  expandInputs,
  IngestError,
  newInputResult,
  recordsOfJsonLines,
  reportInputs,
  storeInBatches,
  type IngestProgress,
  type InputResult,
  type ReadRecord,
} from '../common/ingest/ingest-kit.ts';
import type { Ingester, SourceContext } from '../kit/source.ts';
import { parseItunesResult, parsePlayApp, type AppListing } from './app-listing.ts';
import { writeListings } from './app-store.ts';

/** `dragnet ingest app_store` (docs/ingest.md "App listings"). */

// An iTunes Search response holds at most 200 results of a few KB each; a Lookup of many ids
// is not much larger. Read whole up to this, so memory stays bounded.
export const ITUNES_MAX_BYTES = 32 << 20;
// Listings per transaction: a crash loses at most one uncommitted batch, never part of one.
const BATCH = 500;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** An iTunes Search or Lookup API response: `{"resultCount": N, "results": [...]}`. */
async function* itunesListings(input: string, progress?: IngestProgress): AsyncGenerator<ReadRecord<AppListing>> {
  const response = await readJsonDocument(input, ITUNES_MAX_BYTES, progress);
  if (!isObject(response) || !Array.isArray(response.results)) throw new IngestError(input, 'document', 'not an iTunes Search/Lookup response: no "results" array');
  for (const [i, result] of response.results.entries()) {
    const listing = parseItunesResult(result);
    if (listing !== null) yield { location: `result ${i + 1}`, record: listing };
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
  // google-play-scraper apps come one a line.
  const listings = formatOf(input, format) === 'play' ? recordsOfJsonLines(input, parsePlayApp, progress) : itunesListings(input, progress);
  await storeInBatches({ result, records: listings, batchSize: BATCH, write: (batch) => writeListings(context, batch, source), noun: 'apps', progress });
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
