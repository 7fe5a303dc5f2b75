import path from 'node:path';
import { Readable } from 'node:stream';
import { detectFormat, peekInput, type DetectableFormat } from '../common/ingest/format-detection.ts';
import {
  expandInputs,
  failInput,
  IngestError,
  inputLine,
  newInputResult,
  parseJson,
  readLines,
  reportInputs,
  storeInBatches,
  type InputResult,
  type ReadRecord,
} from '../common/ingest/ingest-kit.ts';
import { jsonObjects } from '../common/ingest/json-objects.ts';
import { plausibleTime } from '../common/ingest/timestamp.ts';
import type { Ingester, IngestOptions, SourceContext } from '../kit/source.ts';
import { recordOfFacts, recordOfLogEntry, type CertificateRecord } from './certificate-record.ts';
import { writeCertificates } from './certificate-store.ts';
import { certstreamRecord } from './certstream.ts';
import { certificateFacts } from './x509.ts';

/** `dragnet ingest certificate`: certstream frames, CT get-entries responses and PEM/DER certificate files (docs/ingest.md "Certificates"). */

// Certificates per transaction: a crash loses at most one uncommitted batch.
const BATCH = 1000;
// A DER certificate is a few KiB; a larger "DER file" is something else.
const MAX_DER_BYTES = 1 << 20;
const DER_SEQUENCE = 0x30;

type Parsed = ReadRecord<CertificateRecord>;

/** A certificate's DER as a record; the reason when it is no certificate. */
function derRecord(der: Uint8Array): CertificateRecord | string {
  try {
    const facts = certificateFacts(der);
    return recordOfFacts(facts, der, { entryType: facts.poisoned ? 'precert' : 'x509', seen: null, log: null });
  } catch (error) {
    return `not an X.509 certificate: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** Every `BEGIN CERTIFICATE` block of a PEM file (a bundle holds many), read line by line. */
async function* pemRecords(lines: AsyncIterable<{ line: string; number: number }>): AsyncGenerator<Parsed> {
  let block: string[] | null = null;
  let start = 0;
  let count = 0;
  for await (const { line, number } of lines) {
    const trimmed = line.trim();
    if (trimmed === '-----BEGIN CERTIFICATE-----') {
      block = [];
      start = number;
    } else if (trimmed === '-----END CERTIFICATE-----' && block) {
      count++;
      yield {
        location: `certificate ${count} (line ${start})`,
        record: derRecord(Buffer.from(block.join(''), 'base64')),
      };
      block = null;
    } else if (block) {
      block.push(trimmed);
    }
  }
  if (block) yield { location: `certificate ${count + 1} (line ${start})`, record: 'no END CERTIFICATE line' };
}

/**
 * `--format pem`: a DER file (it starts with an ASN.1 SEQUENCE) is one certificate read whole,
 * up to 1 MiB; anything else is read as PEM text.
 */
async function* pemOrDerRecords(
  stream: Readable,
  input: string,
  onBytes: (bytes: number) => void,
): AsyncGenerator<Parsed> {
  const chunks = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer | string>;
  const first = await chunks.next();
  if (first.done) return;
  const head = typeof first.value === 'string' ? Buffer.from(first.value) : first.value;
  if (head[0] !== DER_SEQUENCE) {
    async function* all() {
      yield head;
      for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
    }
    yield* pemRecords(readLines(Readable.from(all()), onBytes));
    return;
  }
  onBytes(head.length);
  const parts = [head];
  let size = head.length;
  for (let next = await chunks.next(); !next.done; next = await chunks.next()) {
    const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
    onBytes(chunk.length);
    size += chunk.length;
    if (size > MAX_DER_BYTES)
      throw new IngestError(input, 'DER file', `larger than ${MAX_DER_BYTES} bytes: not one certificate`);
    parts.push(chunk);
  }
  yield { location: 'certificate 1', record: derRecord(Buffer.concat(parts)) };
}

/** Characters of one JSON object read from a stream of them: a get-entries batch of 1,000 is a few MiB. */
const MAX_OBJECT_CHARS = 64 * 1024 * 1024;

interface Counts {
  /** certstream's domains-only frames: names without a certificate, skipped. */
  dnsEntries: number;
}

/** A certstream frame or a saved frame's `data` as a record, its warnings with it; null when skipped. */
function frameRecord(value: unknown, location: string, counts: Counts): Parsed | null {
  if (
    typeof value === 'object' &&
    value !== null &&
    (value as { message_type?: unknown }).message_type === 'dns_entries'
  )
    counts.dnsEntries++;
  const warnings: string[] = [];
  const record = certstreamRecord(value, (reason) => warnings.push(reason));
  if (record === null) return null;
  return warnings.length ? { location, record, warnings } : { location, record };
}

/** certstream frames one a line: a line that is no JSON is rejected alone and the next read. */
async function* certstreamLineRecords(
  lines: AsyncIterable<{ line: string; number: number }>,
  counts: Counts,
): AsyncGenerator<Parsed> {
  for await (const { line, number } of lines) {
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = parseJson(line);
    } catch {
      yield { location: `line ${number}`, record: 'not a JSON frame' };
      continue;
    }
    const parsed = frameRecord(value, `line ${number}`, counts);
    if (parsed) yield parsed;
  }
}

/** The JSON objects of a stream in any layout (json-objects.ts), parsed. */
async function* parsedObjects(
  stream: Readable,
  onBytes: (bytes: number) => void,
): AsyncGenerator<{ location: string; value: unknown } | { location: string; error: string }> {
  for await (const object of jsonObjects(stream, { maxChars: MAX_OBJECT_CHARS, onBytes })) {
    const location = `line ${object.line}`;
    if ('error' in object) {
      yield { location, error: object.error };
      continue;
    }
    try {
      yield { location, value: parseJson(object.text) };
    } catch {
      yield { location, error: 'not valid JSON' };
    }
  }
}

/** certstream frames pretty-printed, in an array, or concatenated. */
async function* certstreamObjectRecords(
  stream: Readable,
  onBytes: (bytes: number) => void,
  counts: Counts,
): AsyncGenerator<Parsed> {
  for await (const object of parsedObjects(stream, onBytes)) {
    if ('error' in object) yield { location: object.location, record: object.error };
    else {
      const parsed = frameRecord(object.value, object.location, counts);
      if (parsed) yield parsed;
    }
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** One get-entries entry as a record; the reason when it is none. */
function entryRecord(entry: unknown): CertificateRecord | string {
  if (!isObject(entry) || typeof entry.leaf_input !== 'string' || typeof entry.extra_data !== 'string')
    return 'not an entry with leaf_input and extra_data';
  try {
    return recordOfLogEntry({ leaf_input: entry.leaf_input, extra_data: entry.extra_data }, null);
  } catch (error) {
    return `not a log entry: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/**
 * RFC 6962 `get-entries` responses (`{"entries": [{leaf_input, extra_data}, …]}`), saved whole,
 * one after another, or entries alone. The file does not say which log or index an entry is.
 */
async function* ctEntryRecords(stream: Readable, onBytes: (bytes: number) => void): AsyncGenerator<Parsed> {
  for await (const object of parsedObjects(stream, onBytes)) {
    if ('error' in object) {
      yield { location: object.location, record: object.error };
      continue;
    }
    const entries =
      isObject(object.value) && Array.isArray(object.value.entries) ? object.value.entries : [object.value];
    for (const [i, entry] of entries.entries()) {
      const location = `${object.location} entry ${i + 1}`;
      const record = entryRecord(entry);
      if (typeof record === 'string') {
        yield { location, record };
        continue;
      }
      const warnings: string[] = [];
      record.seen = plausibleTime(record.seen, (reason) => warnings.push(reason), 'seen');
      record.notBefore = plausibleTime(record.notBefore, (reason) => warnings.push(reason), 'not_before');
      yield warnings.length ? { location, record, warnings } : { location, record };
    }
  }
}

type CertificateFormat = DetectableFormat & { name: 'certstream' | 'pem' | 'ct' };

const startsAsJson = (head: string) => /^\s*[[{]/.test(head);
const FORMATS: CertificateFormat[] = [
  {
    name: 'certstream',
    writtenBy:
      'certstream frames (certstream-server, certstream-server-go, certstream-python clients): one a line, pretty-printed, an array or concatenated',
    detect: (head) => startsAsJson(head) && /"(?:message_type|leaf_cert)"\s*:/.test(head),
  },
  {
    name: 'ct',
    writtenBy: "RFC 6962 get-entries responses (a CT log's /ct/v1/get-entries)",
    detect: (head) => startsAsJson(head) && /"leaf_input"\s*:/.test(head),
  },
  {
    name: 'pem',
    writtenBy: 'PEM certificates or a bundle (openssl, any CA) or one DER certificate',
    // DER starts with a SEQUENCE (0x30) and a long-form length byte, which is no UTF-8.
    detect: (head) => head.includes('-----BEGIN CERTIFICATE-----') || /^0\uFFFD/.test(head),
  },
];

/** Whether a certstream input is one frame a line: its first line is a whole JSON object. */
function oneFrameALine(head: string): boolean {
  const first = head.trimStart().split('\n', 1)[0]!;
  if (!first.startsWith('{')) return false;
  try {
    return isObject(parseJson(first));
  } catch {
    return false;
  }
}

function recordsOf(
  format: string,
  input: { stream: Readable; head: string; name: string },
  onBytes: (bytes: number) => void,
  counts: Counts,
): AsyncIterable<Parsed> {
  if (format === 'pem') return pemOrDerRecords(input.stream, input.name, onBytes);
  if (format === 'ct') return ctEntryRecords(input.stream, onBytes);
  return oneFrameALine(input.head)
    ? certstreamLineRecords(readLines(input.stream, onBytes), counts)
    : certstreamObjectRecords(input.stream, onBytes, counts);
}

async function ingestInput(
  context: SourceContext,
  input: string,
  options: IngestOptions,
  counts: Counts,
): Promise<InputResult> {
  const result = newInputResult(input);
  const onBytes = (bytes: number) => options.progress?.advance(bytes);
  let records: AsyncIterable<Parsed>;
  let stream: Readable;
  try {
    const peeked = await peekInput(input);
    stream = peeked.stream;
    const format =
      options.format === 'auto' ? detectFormat('certificate', input, peeked.head, FORMATS).name : options.format;
    if (peeked.size !== null) options.progress?.start(input, peeked.size, 'bytes');
    records = recordsOf(format, { stream, head: peeked.head, name: input }, onBytes, counts);
  } catch (error) {
    failInput(result, error);
    options.progress?.finish(inputLine('certificates', result));
    return result;
  }
  const discoveredAt = context.clock.now().getTime();
  await storeInBatches({
    result,
    records,
    batchSize: BATCH,
    write: (batch) => writeCertificates(context, batch, discoveredAt),
    stream,
    noun: 'certificates',
    progress: options.progress,
  });
  return result;
}

const FOLDER_FILES = new Set(['.json', '.jsonl', '.ndjson', '.txt', '.pem', '.crt', '.cer', '.der']);

export const certificateIngester: Ingester = {
  name: 'certificate',
  description:
    'certificates from certstream frames (any JSON layout), CT get-entries responses or PEM/DER certificate files, detected per input; files, folders or - (stdin)',
  formats: ['auto', ...FORMATS.map((format) => format.name)],
  async run(context, inputs, options) {
    const results: InputResult[] = [];
    const counts: Counts = { dnsEntries: 0 };
    for (const input of expandInputs(inputs, (file) => FOLDER_FILES.has(path.extname(file).toLowerCase()))) {
      results.push(await ingestInput(context, input, options, counts));
    }
    const report = reportInputs('certificates', results, { dns_entries_skipped: counts.dnsEntries });
    if (counts.dnsEntries > 0)
      report.lines.push(`  ${counts.dnsEntries} dns_entries frames skipped (names without a certificate)`);
    return report;
  },
};
