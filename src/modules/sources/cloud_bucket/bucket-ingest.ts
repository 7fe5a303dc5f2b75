import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import {
  expandInputs,
  IngestError,
  jsonErrorLocation,
  newInputResult,
  openInput,
  parseJson,
  reportInputs,
  storeInBatches,
  type IngestProgress,
  type InputResult,
} from '../common/ingest/ingest-kit.ts';
import type { Ingester, SourceContext } from '../kit/source.ts';
import { createXmlListingReader, gcsObjects, ListingError, type ReadObject } from './bucket-listing.ts';
import { writeObjects } from './bucket-store.ts';
import { createXmlEventReader, XmlSyntaxError } from './listing-xml.ts';

/** `dragnet ingest cloud_bucket` (docs/ingest.md "Bucket listings"). */

// A GCS objects list is one JSON document, read whole: a page holds at most 1,000 objects (about
// 1 MB). XML listings are streamed and have no such bound.
export const GCS_MAX_BYTES = 64 << 20;
// Objects per transaction: a crash loses at most one uncommitted batch, never part of an object.
const BATCH = 1000;
const ORIGIN_SUFFIX = '.url';

type Format = 'auto' | 's3' | 'azure' | 'gcs';

/**
 * The side channel: `<input>.url` beside a listing file holds the URL it was fetched from (its
 * first line), e.g. `https://acme-backups.s3.eu-west-1.amazonaws.com/?list-type=2`. The host
 * tells the provider of an S3-style listing and its region, and object URLs follow its form.
 */
function originOf(input: string): URL | null {
  if (input === '-') return null;
  const file = input + ORIGIN_SUFFIX;
  if (!statSync(file, { throwIfNoEntry: false })?.isFile()) return null;
  const line =
    readFileSync(file, 'utf8')
      .split(/\r?\n/)
      .find((candidate) => candidate.trim() !== '')
      ?.trim() ?? '';
  try {
    const url = new URL(line);
    if (url.protocol === 'https:' || url.protocol === 'http:') return url;
  } catch {
    // Reported below.
  }
  throw new IngestError(input, path.basename(file), 'the first line is not an http(s) URL');
}

/**
 * The objects of one listing, as its bytes arrive. `auto` tells XML (`<`) from JSON (`{`) by the
 * first character; an XML listing is parsed as a stream, a JSON one read whole up to
 * GCS_MAX_BYTES.
 */
async function* objectsOf(input: string, format: Format, progress?: IngestProgress): AsyncGenerator<ReadObject> {
  const origin = originOf(input);
  const { stream, size } = openInput(input);
  if (size !== null) progress?.start(input, size, 'bytes');
  const decoder = new StringDecoder('utf8');
  let kind: 'xml' | 'json' | null = format === 'gcs' ? 'json' : format === 'auto' ? null : 'xml';
  const xml = createXmlEventReader();
  const listing = createXmlListingReader({ format: format === 's3' || format === 'azure' ? format : 'auto', origin });
  const json: string[] = [];
  let jsonBytes = 0;
  function* take(text: string, bytes: number): Generator<ReadObject> {
    if (kind === null) {
      const first = /[^\s\uFEFF]/.exec(text);
      if (!first) return;
      if (first[0] !== '<' && first[0] !== '{')
        throw new ListingError('neither XML (an S3 or Azure listing) nor JSON (a GCS objects list)');
      kind = first[0] === '<' ? 'xml' : 'json';
      text = text.slice(first.index);
    }
    if (kind === 'json') {
      jsonBytes += bytes;
      if (jsonBytes > GCS_MAX_BYTES)
        throw new IngestError(
          input,
          'size',
          `larger than the ${GCS_MAX_BYTES >> 20} MiB a JSON listing is read whole up to`,
        );
      json.push(text);
      return;
    }
    for (const event of xml.write(text)) {
      const object = listing.read(event);
      if (object) yield object;
    }
  }
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      progress?.advance(chunk.length);
      yield* take(decoder.write(chunk), chunk.length);
    }
    yield* take(decoder.end(), 0);
    if (kind === 'xml') {
      xml.close();
      listing.end();
    } else if (kind === 'json') {
      const text = json.join('').replace(/^\uFEFF/, '');
      let document: unknown;
      try {
        document = parseJson(text);
      } catch (error) {
        throw new IngestError(input, jsonErrorLocation(text, error), 'malformed JSON');
      }
      yield* gcsObjects(document);
    } else {
      throw new ListingError('the input is empty');
    }
  } catch (error) {
    if (error instanceof XmlSyntaxError) throw new IngestError(input, error.location, error.reason);
    if (error instanceof ListingError) throw new IngestError(input, 'listing', error.message);
    throw error;
  } finally {
    if (input !== '-') stream.destroy();
  }
}

const ACCEPTS: Record<Format, string[]> = { auto: ['.xml', '.json'], s3: ['.xml'], azure: ['.xml'], gcs: ['.json'] };

async function ingestInput(
  context: SourceContext,
  input: string,
  format: Format,
  progress?: IngestProgress,
): Promise<InputResult> {
  const result = newInputResult(input);
  // One time for the whole input: what it brings is new to rules from then on.
  const source = { name: input === '-' ? 'stdin' : path.basename(input), discoveredAt: context.clock.now().getTime() };
  await storeInBatches({
    result,
    records: objectsOf(input, format, progress),
    batchSize: BATCH,
    write: (batch) => writeObjects(context, batch, source),
    // The objects before a failure are whole: a truncated download still yields them.
    keepBeforeFailure: true,
    noun: 'objects',
    progress,
  });
  return result;
}

export const cloudBucketIngester: Ingester = {
  name: 'cloud_bucket',
  description:
    'open bucket listings: S3 ListBucketResult and Azure EnumerationResults XML, GCS objects JSON (.xml, .json, with an optional <file>.url naming where it was fetched), files, folders or - (stdin)',
  formats: ['auto', 's3', 'azure', 'gcs'],
  async run(context, inputs, options) {
    const format = options.format as Format;
    const results: InputResult[] = [];
    for (const input of expandInputs(inputs, (file) =>
      (ACCEPTS[format] ?? ACCEPTS.auto).includes(path.extname(file).toLowerCase()),
    )) {
      results.push(await ingestInput(context, input, format, options.progress));
    }
    return reportInputs('objects', results);
  },
};
