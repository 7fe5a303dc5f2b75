import {
  expandInputs,
  failInput,
  IngestError,
  inputLine,
  jsonErrorLocation,
  newInputResult,
  openInput,
  parseJson,
  readLines,
  recordsOfJsonLines,
  reportInputs,
  storeInBatches,
  type IngestProgress,
  type InputResult,
  type ReadRecord,
  withSpooledStdin,
} from '../ingest/ingest-kit.ts';
import { detectFormat, peekInput } from '../ingest/format-detection.ts';
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
  /** The tool (and version) that writes it, named when an input is in no format. */
  writtenBy?: string;
  /**
   * Whether an input whose first bytes are `head` is in this format (DetectableFormat.detect):
   * a source whose formats all tell reads with `auto`, its default.
   */
  detect?(head: string, fileName: string): boolean;
}

// Documents per transaction: a crash loses at most one uncommitted batch, never part of a record.
const BATCH = 1000;

async function ingestInput(options: {
  context: SourceContext;
  writer: DocumentWriter;
  label: string;
  file: string;
  format: DocumentFormat;
  noun: string;
  progress?: IngestProgress;
}): Promise<InputResult> {
  const { context, format, progress } = options;
  const result = newInputResult(options.label);
  // One time for the whole input: what it brings is new to rules from then on.
  const discoveredAt = context.clock.now().getTime();
  await storeInBatches({
    result,
    records: format.read(options.file, progress),
    batchSize: BATCH,
    write: (batch) => options.writer.write(batch, discoveredAt),
    noun: options.noun,
    progress,
  });
  return result;
}

type NamedFormat = DocumentFormat & {
  name: string;
  writtenBy: string;
  detect(head: string, fileName: string): boolean;
};

/** The formats that tell their inputs apart, in order, or null when one of them cannot. */
function detectableFormats(formats: Record<string, DocumentFormat>): NamedFormat[] | null {
  const named = Object.entries(formats).map(([name, format]) => ({ ...format, name }));
  return named.every((format): format is NamedFormat => format.detect !== undefined && format.writtenBy !== undefined)
    ? named
    : null;
}

/**
 * A `dragnet ingest` target that stores one source's records in the document store: files,
 * folders (walked for the files the format accepts) or `-`; the first format is the default,
 * `auto` when every format can tell its inputs (each input is then read in the format it is in).
 */
export function documentIngester(options: {
  name: string;
  source: string;
  description: string;
  noun: string;
  formats: Record<string, DocumentFormat>;
}): Ingester {
  const detectable = detectableFormats(options.formats);
  return {
    name: options.name,
    description: options.description,
    formats: [...(detectable ? ['auto'] : []), ...Object.keys(options.formats)],
    async run(context, inputs, { format: formatName, progress }) {
      const forced = options.formats[formatName];
      if (!forced && !(detectable && formatName === 'auto'))
        throw new Error(`${options.name}: unknown format ${formatName}`);
      const accepts = (file: string) =>
        forced ? forced.accepts(file) : detectable!.some((format) => format.accepts(file));
      const writer = createDocumentWriter(context, options.source);
      const ingest = async (label: string, file: string) => {
        let format = forced;
        if (!format) {
          try {
            const { head, stream } = await peekInput(file);
            stream.destroy();
            format = detectFormat(options.source, label, head, detectable!);
          } catch (error) {
            const result = newInputResult(label);
            failInput(result, error);
            progress?.finish(inputLine(options.noun, result));
            return result;
          }
        }
        return ingestInput({ context, writer, label, file, format, noun: options.noun, progress });
      };
      const results: InputResult[] = [];
      for (const input of expandInputs(inputs, accepts)) {
        results.push(
          input === '-'
            ? await withSpooledStdin(context.dataDir, (file) => ingest('-', file))
            : await ingest(input, input),
        );
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
  const tooLarge = () =>
    new IngestError(input, 'size', `larger than the ${maxBytes >> 20} MiB a JSON document is read whole up to`);
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
    const text = Buffer.concat(chunks)
      .toString('utf8')
      .replace(/^\uFEFF/, '');
    try {
      return parseJson(text);
    } catch (error) {
      throw new IngestError(input, jsonErrorLocation(text, error), 'malformed JSON');
    }
  } finally {
    if (input !== '-') stream.destroy();
  }
}

const isWholeJson = (text: string): boolean => {
  try {
    parseJson(text);
    return true;
  } catch {
    return false;
  }
};

/**
 * The `read` of a format whose values are JSON written one a line or as one document
 * (pretty-printed or not; an array's elements are values each): an input whose first line is a
 * whole JSON value is JSON Lines. `records` makes one value (at `line 3`, `record 2`, `document`)
 * the records it holds: a thread document holds its posts.
 */
export function jsonValues<T = DocumentInput>(
  records: (value: unknown, location: string) => Iterable<ReadRecord<T>>,
  maxBytes: number,
) {
  return async function* read(input: string, progress?: IngestProgress): AsyncGenerator<ReadRecord<T>> {
    const { head, stream } = await peekInput(input);
    stream.destroy();
    const firstLine = head.trimStart().split('\n', 1)[0]!;
    if (firstLine !== '' && isWholeJson(firstLine)) {
      const { stream: lines, size } = openInput(input);
      if (size !== null) progress?.start(input, size, 'bytes');
      try {
        for await (const { line, number } of readLines(lines, (bytes) => progress?.advance(bytes))) {
          if (line.trim() === '') continue;
          let value: unknown;
          try {
            value = parseJson(line);
          } catch {
            yield { location: `line ${number}`, record: 'not valid JSON' };
            continue;
          }
          yield* records(value, `line ${number}`);
        }
      } finally {
        lines.destroy();
      }
      return;
    }
    const value = await readJsonDocument(input, maxBytes, progress);
    if (!Array.isArray(value)) yield* records(value, 'document');
    else for (const [index, item] of value.entries()) yield* records(item, `record ${index + 1}`);
  };
}
