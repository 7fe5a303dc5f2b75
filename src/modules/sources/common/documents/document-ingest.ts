import {
  expandInputs,
  IngestError,
  jsonErrorLocation,
  newInputResult,
  openInput,
  parseJson,
  recordsOfJsonLines,
  reportInputs,
  storeInBatches,
  type IngestProgress,
  type InputResult,
  type ReadRecord,
} from '../ingest/ingest-kit.ts';
import type { Ingester, SourceContext } from '../../kit/source.ts';
import { createDocumentWriter, type DocumentInput, type DocumentWriter } from './document-store.ts';
import { RecordError } from './record-fields.ts';

/** A record read from an input (at `line 12`, `messages[3]`, `record 2`): its document, or why it was rejected. */
export type DocumentRecord = ReadRecord<DocumentInput>;

/** One `--format` of a document ingester. */
export interface DocumentFormat {
  /** Whether a file found in a folder is read in this format. */
  accepts(file: string): boolean;
  /** The records of one input (a file or `-`); throws IngestError when the input cannot be read at all. */
  read(input: string, progress?: IngestProgress): AsyncIterable<DocumentRecord>;
}

// Documents per transaction: a crash loses at most one uncommitted batch, never part of a record.
const BATCH = 1000;

async function ingestInput(context: SourceContext, writer: DocumentWriter, input: string, format: DocumentFormat, noun: string, progress?: IngestProgress): Promise<InputResult> {
  const result = newInputResult(input);
  // One time for the whole input: what it brings is new to rules from then on.
  const discoveredAt = context.clock.now().getTime();
  await storeInBatches({ result, records: format.read(input, progress), batchSize: BATCH, write: (batch) => writer.write(batch, discoveredAt), noun, progress });
  return result;
}

/**
 * A `dragnet ingest` target that stores one source's records in the document store: files,
 * folders (walked for the files the format accepts) or `-`; the first format is the default.
 */
export function documentIngester(options: { name: string; source: string; description: string; noun: string; formats: Record<string, DocumentFormat> }): Ingester {
  return {
    name: options.name,
    description: options.description,
    formats: Object.keys(options.formats),
    async run(context, inputs, { format: formatName, progress }) {
      const format = options.formats[formatName];
      if (!format) throw new Error(`${options.name}: unknown format ${formatName}`);
      const writer = createDocumentWriter(context, options.source);
      const results: InputResult[] = [];
      for (const input of expandInputs(inputs, (file) => format.accepts(file))) {
        results.push(await ingestInput(context, writer, input, format, options.noun, progress));
      }
      return reportInputs(options.noun, results);
    },
  };
}

/** What `parse` returns, or the reason of the RecordError it threw. */
export function orReason<T>(parse: () => T): T | string {
  try {
    return parse();
  } catch (error) {
    if (error instanceof RecordError) return error.message;
    throw error;
  }
}

/** The `read` of a JSON Lines format: one record a line, blank lines skipped; `parse` throws RecordError. */
export function jsonLines(parse: (value: unknown) => DocumentInput): DocumentFormat['read'] {
  return (input, progress) => recordsOfJsonLines(input, (value) => orReason(() => parse(value)), progress);
}

/**
 * A single-document JSON input (a DiscordChatExporter export, a Pastebin list) read whole, up to
 * `maxBytes`: a larger one fails with that reason before it is parsed, so memory stays bounded.
 */
export async function readJsonDocument(input: string, maxBytes: number, progress?: IngestProgress): Promise<unknown> {
  const { stream, size } = openInput(input);
  const tooLarge = () => new IngestError(input, 'size', `larger than the ${maxBytes >> 20} MiB a JSON document is read whole up to`);
  try {
    if (size !== null && size > maxBytes) throw tooLarge();
    if (size !== null) progress?.start(input, size, 'bytes');
    const chunks: Buffer[] = [];
    let read = 0;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      read += chunk.length;
      if (read > maxBytes) throw tooLarge();
      chunks.push(chunk);
      progress?.advance(chunk.length);
    }
    const text = Buffer.concat(chunks).toString('utf8').replace(/^\uFEFF/, '');
    try {
      return parseJson(text);
    } catch (error) {
      throw new IngestError(input, jsonErrorLocation(text, error), 'malformed JSON');
    }
  } finally {
    if (input !== '-') stream.destroy();
  }
}
