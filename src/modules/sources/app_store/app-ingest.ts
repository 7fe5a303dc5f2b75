import path from 'node:path';
import { jsonValues, readJsonDocument } from '../common/documents/document-ingest.ts';
import { detectFormat, peekInput, type DetectableFormat } from '../common/ingest/format-detection.ts';
import { plausibleTime } from '../common/ingest/timestamp.ts';
import {
  expandInputs,
  IngestError,
  failInput,
  inputLine,
  newInputResult,
  recordsOfJsonLines,
  reportInputs,
  storeInBatches,
  type IngestProgress,
  type InputResult,
  type ReadRecord,
  withSpooledStdin,
} from '../common/ingest/ingest-kit.ts';
import type { Ingester, SourceContext } from '../kit/source.ts';
import {
  parseItunesResult,
  parsePlayApp,
  parseScrapedApp,
  type AppListing,
  type ParsedListing,
} from './app-listing.ts';
import { writeListings } from './app-store.ts';

/** `dragnet ingest app_store` (docs/ingest.md "App listings"). */

// An iTunes Search response holds at most 200 results of a few KB each; a Lookup of many ids
// is not much larger. Read whole up to this, so memory stays bounded.
export const ITUNES_MAX_BYTES = 32 << 20;
// Listings per transaction: a crash loses at most one uncommitted batch, never part of one.
const BATCH = 500;

const PLAY_FILES = new Set(['.jsonl', '.ndjson']);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** An iTunes Search or Lookup API response: `{"resultCount": N, "results": [...]}`. */
/**
 * A parsed listing as a record: its release and update dates go through plausibleTime (a date in
 * the future or before 1990 is a misread field: null, with a warning).
 */
function listingRecord(listing: ParsedListing, location: string): ReadRecord<AppListing> | null {
  if (listing === null) return null;
  if (typeof listing === 'string') return { location, record: listing };
  const warnings: string[] = [];
  const warn = (reason: string) => warnings.push(reason);
  return {
    location,
    record: {
      ...listing,
      releasedAt: plausibleTime(listing.releasedAt, warn, 'release date'),
      updatedAt: plausibleTime(listing.updatedAt, warn, 'update date'),
    },
    warnings,
  };
}

/** An iTunes Search or Lookup API response: `{"resultCount": N, "results": [...]}`. */
async function* itunesListings(input: string, progress?: IngestProgress): AsyncGenerator<ReadRecord<AppListing>> {
  const response = await readJsonDocument(input, ITUNES_MAX_BYTES, progress);
  if (!isObject(response) || !Array.isArray(response.results))
    throw new IngestError(input, 'document', 'not an iTunes Search/Lookup response: no "results" array');
  for (const [i, result] of response.results.entries()) {
    const record = listingRecord(parseItunesResult(result), `result ${i + 1}`);
    if (record !== null) yield record;
  }
}

async function* playListings(input: string, progress?: IngestProgress): AsyncGenerator<ReadRecord<AppListing>> {
  for await (const record of recordsOfJsonLines(input, parsePlayApp, progress))
    yield listingRecord(record.record, record.location)!;
}

// The scrapers' output of a search of hundreds of apps with their descriptions stays below this.
const SCRAPED_MAX_BYTES = 64 << 20;

/** google-play-scraper and app-store-scraper apps: a JSON array, one object, or one a line; each app's store told by its shape. */
const scrapedListings = jsonValues<AppListing>(function* (value, location) {
  const record = listingRecord(parseScrapedApp(value), location);
  if (record !== null) yield record;
}, SCRAPED_MAX_BYTES);

type Format = 'itunes' | 'scraper' | 'play';

const READERS: Record<Format, (input: string, progress?: IngestProgress) => AsyncIterable<ReadRecord<AppListing>>> = {
  itunes: itunesListings,
  scraper: scrapedListings,
  play: playListings,
};

const DETECTABLE: (DetectableFormat & { name: Format })[] = [
  {
    name: 'itunes',
    writtenBy: 'iTunes Search/Lookup API (itunes.apple.com/search, /lookup)',
    detect: (head) => /^\s*\{/.test(head) && /"results"\s*:\s*\[|"resultCount"\s*:/.test(head),
  },
  {
    name: 'scraper',
    writtenBy:
      'google-play-scraper and app-store-scraper (npm, 9.x / 0.18.x): app objects as a JSON array, one object or JSON Lines',
    detect: (head) => /^\s*[[{]/.test(head) && /"appId"\s*:/.test(head),
  },
];

async function formatOf(input: string, format: string): Promise<Format> {
  if (format !== 'auto') return format as Format;
  const { head, stream } = await peekInput(input);
  stream.destroy();
  return detectFormat('app_store', input, head, DETECTABLE).name;
}

const ACCEPTS: Record<string, (file: string) => boolean> = {
  auto: (file) => ['.json', ...PLAY_FILES].includes(path.extname(file).toLowerCase()),
  itunes: (file) => path.extname(file).toLowerCase() === '.json',
  scraper: (file) => ['.json', ...PLAY_FILES].includes(path.extname(file).toLowerCase()),
  play: (file) => PLAY_FILES.has(path.extname(file).toLowerCase()),
};

/** `file` is where `input` is read from: standard input is spooled to a file first, so that detection can look at its start. */
async function ingestInput(
  context: SourceContext,
  input: string,
  file: string,
  format: string,
  progress?: IngestProgress,
): Promise<InputResult> {
  const result = newInputResult(input);
  // One time for the whole input: what it brings is new to rules from then on.
  const source = { name: input === '-' ? 'stdin' : path.basename(input), discoveredAt: context.clock.now().getTime() };
  let listings: AsyncIterable<ReadRecord<AppListing>>;
  try {
    listings = READERS[await formatOf(file, format)](file, progress);
  } catch (error) {
    failInput(result, error);
    progress?.finish(inputLine('apps', result));
    return result;
  }
  await storeInBatches({
    result,
    records: listings,
    batchSize: BATCH,
    write: (batch) => writeListings(context, batch, source),
    noun: 'apps',
    progress,
  });
  return result;
}

export const appStoreIngester: Ingester = {
  name: 'app_store',
  description:
    'app listings: iTunes Search/Lookup API responses, google-play-scraper and app-store-scraper apps (a JSON array, one object or JSON Lines), files, folders or - (stdin)',
  formats: ['auto', 'itunes', 'scraper', 'play'],
  async run(context, inputs, { format, progress }) {
    const results: InputResult[] = [];
    for (const input of expandInputs(inputs, ACCEPTS[format] ?? ACCEPTS.auto!)) {
      results.push(
        input === '-'
          ? await withSpooledStdin(context.dataDir, (file) => ingestInput(context, input, file, format, progress))
          : await ingestInput(context, input, input, format, progress),
      );
    }
    return reportInputs('apps', results);
  },
};
