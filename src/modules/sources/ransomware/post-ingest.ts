import path from 'node:path';
import { Readable } from 'node:stream';
import {
  expandInputs,
  IngestError,
  jsonErrorLocation,
  newInputResult,
  parseJson,
  readLines,
  reportInputs,
  storeInBatches,
  type IngestProgress,
  type InputResult,
  type ReadRecord,
} from '../common/ingest/ingest-kit.ts';
import { detectFormat, peekInput, type DetectableFormat } from '../common/ingest/format-detection.ts';
import type { Ingester, SourceContext } from '../kit/source.ts';
import { readPost, type PostRecord } from './post-record.ts';
import { writePosts } from './post-store.ts';

/** `dragnet ingest ransomware` and what the ransomware-live collector shares with it (docs/ingest.md). */

/**
 * A JSON array is parsed whole, so it is read only up to this size (ransomware.live's whole
 * posts.json is a few tens of MB); a larger one fails with advice to convert it to JSON Lines,
 * which is streamed without limit.
 */
export const MAX_POSTS_ARRAY_BYTES = 64 * 1024 * 1024;

const POST_FILES = new Set(['.json', '.jsonl', '.ndjson']);
// Posts per transaction: a crash loses at most one uncommitted batch.
const BATCH = 1000;

/** One record of an input: where it is (`record N` of an array, `line N` of JSON Lines) and the post or why it is none. */
export type PostEntry = ReadRecord<PostRecord>;

// A string, or a bare NaN/Infinity token outside strings.
const NON_FINITE = /"(?:[^"\\]|\\.)*"|-?\b(?:NaN|Infinity)\b/g;

/**
 * JSON as Python writes it: json.dumps of a pandas frame writes a missing value as a bare `NaN`
 * (and `Infinity`), which JSON.parse refuses; they are read as null. Strings are left alone.
 */
export function parsePythonJson(text: string): unknown {
  if (!text.includes('NaN') && !text.includes('Infinity')) return parseJson(text);
  return parseJson(text.replace(NON_FINITE, (token) => (token.startsWith('"') ? token : 'null')));
}

/** A post of one record, with the values it did not keep and why. */
function entryOf(location: string, value: unknown): PostEntry {
  const warnings: string[] = [];
  const record = readPost(value, (reason) => warnings.push(reason));
  return warnings.length ? { location, record, warnings } : { location, record };
}

// Leading bytes that say nothing about the format: whitespace and a UTF-8 byte-order mark.
const PADDING = new Set([0x20, 0x09, 0x0a, 0x0d, 0xef, 0xbb, 0xbf]);
const OPEN_BRACKET = 0x5b;

async function* postsOfArray(first: Buffer[], rest: AsyncIterator<Buffer>, input: string): AsyncGenerator<PostEntry> {
  const chunks = [...first];
  let size = chunks.reduce((n, chunk) => n + chunk.length, 0);
  for (let next = await rest.next(); !next.done; next = await rest.next()) {
    size += next.value.length;
    if (size > MAX_POSTS_ARRAY_BYTES) {
      throw new IngestError(
        input,
        'size',
        `a JSON array over ${MAX_POSTS_ARRAY_BYTES / 2 ** 20} MiB is not read whole: convert it to JSON Lines (jq -c '.[]')`,
      );
    }
    chunks.push(next.value);
  }
  const text = Buffer.concat(chunks)
    .toString('utf8')
    .replace(/^\uFEFF/, '');
  let records: unknown[];
  try {
    records = parsePythonJson(text) as unknown[];
  } catch (error) {
    throw new IngestError(input, jsonErrorLocation(text, error), `not valid JSON: ${(error as Error).message}`);
  }
  for (const [index, record] of records.entries()) yield entryOf(`record ${index + 1}`, record);
}

async function* postsOfLines(lines: AsyncIterable<{ line: string; number: number }>): AsyncGenerator<PostEntry> {
  for await (const { line, number } of lines) {
    if (line.trim() === '') continue;
    let record: unknown;
    try {
      record = parsePythonJson(line);
    } catch {
      yield { location: `line ${number}`, record: 'not valid JSON' };
      continue;
    }
    yield entryOf(`line ${number}`, record);
  }
}

/**
 * The posts of a byte stream: a JSON array (a posts.json file, a v2 API response) when its first
 * character is `[`, else JSON Lines, one record a line. `onBytes` hears every chunk read.
 */
export async function* readPosts(
  stream: Readable,
  input: string,
  onBytes?: (bytes: number) => void,
): AsyncGenerator<PostEntry> {
  const source = (stream as AsyncIterable<Buffer | string>)[Symbol.asyncIterator]();
  const chunks: AsyncIterator<Buffer> = {
    async next() {
      const next = await source.next();
      if (next.done) return next;
      const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
      onBytes?.(chunk.length);
      return { done: false, value: chunk };
    },
  };
  const head: Buffer[] = [];
  let first: number | undefined;
  while (first === undefined) {
    const next = await chunks.next();
    if (next.done) return;
    head.push(next.value);
    first = next.value.find((byte) => !PADDING.has(byte));
  }
  if (first === OPEN_BRACKET) {
    yield* postsOfArray(head, chunks, input);
    return;
  }
  async function* all() {
    yield* head;
    for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
  }
  yield* postsOfLines(readLines(Readable.from(all(), { objectMode: false })));
}

/**
 * Stores the posts of one input in batches, counting them and rejecting bad records into
 * `result`; an input that cannot be read fails the result. Posts are dated now. The ingester
 * passes its input's stream, closed after, and the progress display that hears the input's line.
 */
export async function storePosts(
  context: SourceContext,
  entries: AsyncIterable<PostEntry>,
  result: InputResult,
  input: { stream?: Readable; progress?: IngestProgress } = {},
): Promise<void> {
  const discoveredAt = context.clock.now().getTime();
  await storeInBatches({
    result,
    records: entries,
    batchSize: BATCH,
    write: (batch) => writePosts(context, batch, discoveredAt),
    noun: 'posts',
    ...input,
  });
}

/** The one format, for the refusal of an input in none: JSON (an array or JSON Lines) as ransomware.live and ransomwatch write it. */
const POSTS_FORMAT: DetectableFormat = {
  name: 'posts',
  writtenBy:
    'ransomware.live posts.json and v2 API (api.ransomware.live/v2), ransomwatch posts.json; an array or JSON Lines',
  detect: (head) => head.trim() === '' || /^\s*[[{]/.test(head),
};

/** The posts of an input whose head was looked at: an input that is no JSON is refused whole, naming the format. */
async function* postsOfInput(
  input: string,
  head: string,
  stream: Readable,
  onBytes: (bytes: number) => void,
): AsyncGenerator<PostEntry> {
  detectFormat('ransomware', input, head, [POSTS_FORMAT]);
  yield* readPosts(stream, input, onBytes);
}

export const ransomwareIngester: Ingester = {
  name: 'ransomware',
  description:
    'ransomware leak-site posts: ransomware.live posts.json arrays, v2 API responses or JSON Lines; files, folders or - (stdin)',
  formats: ['posts'],
  async run(context, inputs, { progress }) {
    const results: InputResult[] = [];
    for (const input of expandInputs(inputs, (file) => POST_FILES.has(path.extname(file).toLowerCase()))) {
      const result = newInputResult(input);
      const { head, stream, size } = await peekInput(input);
      if (size !== null) progress?.start(input, size, 'bytes');
      await storePosts(
        context,
        postsOfInput(input, head, stream, (bytes) => progress?.advance(bytes)),
        result,
        { stream, progress },
      );
      results.push(result);
    }
    return reportInputs('posts', results);
  },
};
