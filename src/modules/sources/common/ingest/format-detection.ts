import { openSync, readSync, closeSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { IngestError, openInput } from './ingest-kit.ts';

/** Bytes of an input that format detection reads: enough for a header, a first record or a tag. */
export const HEAD_BYTES = 64 * 1024;

/** One of a source's input formats, with how to tell a file is in it. */
export interface DetectableFormat {
  /** The `--format` value. */
  name: string;
  /** The tool (and version) that writes it, for the refusal message and docs/ingest.md. */
  writtenBy: string;
  /**
   * Whether an input starting with `head` (its first HEAD_BYTES as UTF-8, BOM removed; a record may
   * be cut at the end) and named `fileName` (`-` for standard input) is in this format.
   */
  detect(head: string, fileName: string): boolean;
}

/**
 * The start of `input` as text, and a stream of the whole input: for a file the head is read apart
 * and the stream opened afresh; standard input is read once, so its stream replays the head.
 */
export async function peekInput(input: string): Promise<{ head: string; stream: Readable; size: number | null }> {
  if (input !== '-') {
    const head = readFileHead(input);
    return { head, ...openInput(input) };
  }
  const { stream, size } = openInput(input);
  const chunks: Buffer[] = [];
  let bytes = 0;
  const iterator = (stream as AsyncIterable<Buffer | string>)[Symbol.asyncIterator]();
  let ended = false;
  while (bytes < HEAD_BYTES) {
    const next = await iterator.next();
    if (next.done) {
      ended = true;
      break;
    }
    const chunk = typeof next.value === 'string' ? Buffer.from(next.value) : next.value;
    chunks.push(chunk);
    bytes += chunk.length;
  }
  async function* replay() {
    yield* chunks;
    if (ended) return;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
  }
  return { head: headText(Buffer.concat(chunks)), stream: Readable.from(replay(), { objectMode: false }), size };
}

function readFileHead(file: string): string {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    // openInput reports the error as an unreadable input.
    return '';
  }
  try {
    const buffer = Buffer.alloc(HEAD_BYTES);
    return headText(buffer.subarray(0, readSync(fd, buffer, 0, HEAD_BYTES, 0)));
  } finally {
    closeSync(fd);
  }
}

const headText = (bytes: Buffer) =>
  bytes
    .subarray(0, HEAD_BYTES)
    .toString('utf8')
    .replace(/^\uFEFF/, '');

/**
 * The first of `formats` that `head` is in. An input in none of them is refused with one message
 * naming every format the source reads and the tool that writes it.
 */
export function detectFormat<F extends DetectableFormat>(
  source: string,
  input: string,
  head: string,
  formats: readonly F[],
): F {
  const fileName = input === '-' ? '-' : path.basename(input);
  const found = formats.find((format) => format.detect(head, fileName));
  if (found) return found;
  throw new IngestError(
    input,
    'format',
    `is in none of the formats ${source} reads: ${formats.map((format) => `${format.name} (${format.writtenBy})`).join(', ')}`,
  );
}
