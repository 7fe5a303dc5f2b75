import path from 'node:path';
import { Readable } from 'node:stream';
import { expandInputs, IngestError, newInputResult, openInput, readLines, reportInputs, storeInBatches, type InputResult, type ReadRecord } from '../common/ingest/ingest-kit.ts';
import type { Ingester, IngestOptions, SourceContext } from '../kit/source.ts';
import { recordOfFacts, type CertificateRecord } from './certificate-record.ts';
import { writeCertificates } from './certificate-store.ts';
import { parseCertstreamFrame } from './certstream.ts';
import { certificateFacts } from './x509.ts';

/** `dragnet ingest certificate`: certstream frames and PEM/DER certificate files (docs/ingest.md "Certificates"). */

const FILES: Record<string, Set<string>> = {
  certstream: new Set(['.json', '.jsonl', '.ndjson', '.txt']),
  pem: new Set(['.pem', '.crt', '.cer', '.der']),
};
// Certificates per transaction: a crash loses at most one uncommitted batch.
const BATCH = 1000;
// A DER certificate is a few KiB; a larger "DER file" is something else.
const MAX_DER_BYTES = 1 << 20;
const DER_SEQUENCE = 0x30;

type Parsed = ReadRecord<CertificateRecord>;

async function* certstreamRecords(lines: AsyncIterable<{ line: string; number: number }>): AsyncGenerator<Parsed> {
  for await (const { line, number } of lines) {
    if (line.trim() === '') continue;
    const record = parseCertstreamFrame(line);
    if (record !== null) yield { location: `line ${number}`, record };
  }
}

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
      yield { location: `certificate ${count} (line ${start})`, record: derRecord(Buffer.from(block.join(''), 'base64')) };
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
async function* pemOrDerRecords(stream: Readable, input: string, onBytes: (bytes: number) => void): AsyncGenerator<Parsed> {
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
    if (size > MAX_DER_BYTES) throw new IngestError(input, 'DER file', `larger than ${MAX_DER_BYTES} bytes: not one certificate`);
    parts.push(chunk);
  }
  yield { location: 'certificate 1', record: derRecord(Buffer.concat(parts)) };
}

async function ingestInput(context: SourceContext, input: string, options: IngestOptions): Promise<InputResult> {
  const result = newInputResult(input);
  const { stream, size } = openInput(input);
  if (size !== null) options.progress?.start(input, size, 'bytes');
  const onBytes = (bytes: number) => options.progress?.advance(bytes);
  const discoveredAt = context.clock.now().getTime();
  await storeInBatches({
    result,
    records: options.format === 'pem' ? pemOrDerRecords(stream, input, onBytes) : certstreamRecords(readLines(stream, onBytes)),
    batchSize: BATCH,
    write: (batch) => writeCertificates(context, batch, discoveredAt),
    stream,
    noun: 'certificates',
    progress: options.progress,
  });
  return result;
}

export const certificateIngester: Ingester = {
  name: 'certificate',
  description: 'certificates from certstream frames (one JSON frame a line) or PEM/DER certificate files, files, folders or - (stdin)',
  formats: ['certstream', 'pem'],
  async run(context, inputs, options) {
    const accepted = FILES[options.format] ?? FILES.certstream!;
    const results: InputResult[] = [];
    for (const input of expandInputs(inputs, (file) => accepted.has(path.extname(file).toLowerCase()))) {
      results.push(await ingestInput(context, input, options));
    }
    return reportInputs('certificates', results);
  },
};
