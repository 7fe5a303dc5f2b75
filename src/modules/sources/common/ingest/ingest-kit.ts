import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * What every source's ingester shares: naming inputs (files, folders, `-`), reading text line
 * by line as a stream with progress, storing records in batches, and reporting bad records
 * without aborting the input and unreadable inputs without aborting the run.
 */

/** An input that cannot be read at all: names it and where in it the problem is. */
export class IngestError extends Error {
  constructor(
    readonly source: string,
    readonly location: string,
    readonly reason: string,
  ) {
    super(`${source}: ${location}: ${reason}`);
  }
}

// V8 quotes up to this many characters either side of an unexpected token, and "..." where it cut.
const JSON_CONTEXT_CHARS = 10;
const UNEXPECTED_TOKEN = /^Unexpected token '([\s\S])', (\.\.\.)?"([\s\S]*)"(\.\.\.)? is not valid JSON$/;

/** Where `needle` starts in `text`, every time. */
function indicesOf(text: string, needle: string): number[] {
  const found: number[] = [];
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) found.push(at);
  return found;
}

/**
 * The offset in `text` of a JSON.parse failure, or null when it cannot be told. V8 gives it ("… in
 * JSON at position 15", newer V8s add "(line 2 column 3)"), or says the input ended early
 * ("Unexpected end of JSON input"), or quotes the text around an unexpected token, which is found
 * in `text` when only one place fits.
 */
function jsonErrorOffset(text: string, message: string): number | null {
  const position = /\bat position (\d+)/.exec(message);
  if (position) return Number(position[1]);
  if (message.startsWith('Unexpected end of JSON input')) return text.length;
  // "undefined", "NaN", "Infinity" and "[object Object]" are refused whole.
  if (message === `"${text}" is not valid JSON`) return 0;
  const unexpected = UNEXPECTED_TOKEN.exec(message);
  if (!unexpected) return null;
  const [, token, cutBefore, quoted = '', cutAfter] = unexpected;
  const starts = !cutBefore ? [0] : !cutAfter ? [text.length - quoted.length] : indicesOf(text, quoted);
  // Short texts are quoted whole, so the token may be any of theirs.
  const tokenAt = cutBefore
    ? [JSON_CONTEXT_CHARS]
    : cutAfter
      ? [quoted.length - JSON_CONTEXT_CHARS]
      : indicesOf(quoted, token!);
  const offsets = starts
    .filter((start) => start >= 0 && text.startsWith(quoted, start))
    .flatMap((start) => tokenAt.map((at) => start + at))
    .filter((offset) => text[offset] === token);
  return offsets.length === 1 ? offsets[0]! : null;
}

/**
 * Where a JSON.parse failure is in `text`: "line L, column C" (from 1; a column counts UTF-16
 * units, as V8 does). When V8 does not tell and the text it quotes fits several places, the
 * location quotes it too rather than guess a line.
 */
export function jsonErrorLocation(text: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const offset = jsonErrorOffset(text, message);
  if (offset === null) {
    const quoted = UNEXPECTED_TOKEN.exec(message)?.[3];
    return quoted === undefined ? 'position unknown' : `near ${JSON.stringify(quoted)}`;
  }
  let line = 1;
  let lineStart = 0;
  for (
    let newline = text.indexOf('\n');
    newline !== -1 && newline < offset;
    newline = text.indexOf('\n', newline + 1)
  ) {
    line++;
    lineStart = newline + 1;
  }
  return `line ${line}, column ${offset - lineStart + 1}`;
}

// PostgreSQL refuses U+0000 in text (and a NUL in a record aborted its whole batch); it carries
// nothing a search could look for, so it is removed from whatever an ingest reads, on both
// engines alike. A NUL byte is removed from each line, and `\u0000` from JSON before it is
// parsed (only where the backslash is not itself escaped: `\\u0000` is a backslash and text).
const NUL_ESCAPE = /(?<!\\)((?:\\\\)*)\\u0000/g;

/** `text` without U+0000. */
export const withoutNul = (text: string): string => (text.includes('\0') ? text.replaceAll('\0', '') : text);

/** JSON.parse of ingested text: no string of the value holds U+0000. */
export function parseJson(text: string): unknown {
  const clean = withoutNul(text);
  return JSON.parse(clean.includes('\\u0000') ? clean.replace(NUL_ESCAPE, '$1') : clean);
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * `value` (a report, an error message) with every path inside the server's data folder cut to
 * its file name: a body posted to the ingestion API, standard input, an inbox file are kept
 * there while they are read, and neither a client nor the operator's terminal is told where
 * the server keeps its files (`/srv/dragnet/tmp/ingest-…/dump.jsonl` is `dump.jsonl`).
 */
export function withoutDataPaths<T>(value: T, dataDir: string): T {
  const roots = [...new Set([dataDir, path.resolve(dataDir)])].map(escapeRegExp).join('|');
  const inDataDir = new RegExp(`(?:${roots})(?:[/\\\\][^/\\\\\\s'"]*)*[/\\\\]`, 'g');
  const strip = (item: unknown): unknown => {
    if (typeof item === 'string') return item.replace(inDataDir, '');
    if (Array.isArray(item)) return item.map(strip);
    if (typeof item === 'object' && item !== null)
      return Object.fromEntries(Object.entries(item).map(([key, entry]) => [key, strip(entry)]));
    return item;
  };
  return strip(value) as T;
}

/** One record that was skipped, and why. */
export interface Rejection {
  location: string;
  reason: string;
}

/**
 * A record of an input and where it is in it (`line 12`, `record 3`), or why it is no record;
 * `warnings` say which of its values were stored as null rather than guessed, and why.
 */
export interface ReadRecord<T> {
  location: string;
  record: T | string;
  warnings?: string[];
}

export interface IngestProgress {
  start(input: string, total: number, unit: string): void;
  advance(amount: number): void;
  /** The input is done; `line` says what became of it. */
  finish(line: string): void;
}

/**
 * Files named by the arguments, in order; folders are walked in name order for the files that
 * `accept` takes. `-` stands for standard input.
 */
export function expandInputs(args: string[], accept: (file: string) => boolean): string[] {
  const files: string[] = [];
  const walk = (target: string) => {
    const stat = statSync(target);
    if (stat.isDirectory()) {
      for (const entry of readdirSync(target).sort()) walk(path.join(target, entry));
    } else if (accept(target)) {
      files.push(target);
    }
  };
  for (const arg of args) {
    if (arg === '-') files.push('-');
    else if (statSync(arg, { throwIfNoEntry: false })?.isFile()) files.push(arg);
    else if (statSync(arg, { throwIfNoEntry: false })?.isDirectory()) walk(arg);
    else throw new IngestError(arg, 'path', 'no such file or folder');
  }
  return files;
}

// What opening or reading an input raised (ENOENT, EACCES, EISDIR, EIO): a fault of the input,
// which failInput tells from a fault of ours (a database or programming error, also with a code).
const inputErrors = new WeakSet<object>();
const markInputError = (error: unknown) => {
  if (typeof error === 'object' && error !== null) inputErrors.add(error);
};

/** A file (or standard input for `-`) as a byte stream, with its size when known. */
export function openInput(input: string): { stream: Readable; size: number | null } {
  if (input === '-') {
    if (!process.stdin.listeners('error').includes(markInputError)) process.stdin.on('error', markInputError);
    return { stream: process.stdin, size: null };
  }
  let size: number;
  try {
    size = statSync(input).size;
  } catch (error) {
    markInputError(error);
    throw error;
  }
  return { stream: createReadStream(input).on('error', markInputError), size };
}

/** Bytes of one line that are read; the rest of a longer line is dropped, unread into memory. */
export const MAX_LINE_BYTES = 1 << 20;

/**
 * The lines of a stream as bytes, numbered from 1, without their line ends (`\n` or `\r\n`),
 * each made into a T by `make`; `onBytes` hears how many bytes each chunk took (for a progress bar
 * over the file size). A line longer than MAX_LINE_BYTES is cut there: a file without newlines
 * never fills memory, and every parser rejects lines that long anyway.
 */
async function* linesOf<T>(
  stream: Readable,
  make: (bytes: Buffer, number: number) => T,
  onBytes?: (bytes: number) => void,
): AsyncGenerator<T> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let number = 0;
  const line = (last: Buffer) => {
    const bytes = pending.length ? Buffer.concat([...pending, last]) : last;
    pending = [];
    pendingBytes = 0;
    number++;
    return make(
      bytes.length > 0 && bytes[bytes.length - 1] === 13 ? bytes.subarray(0, bytes.length - 1) : bytes,
      number,
    );
  };
  const keep = (piece: Buffer) => {
    const room = MAX_LINE_BYTES - pendingBytes;
    if (room <= 0) return;
    const kept = piece.length > room ? piece.subarray(0, room) : piece;
    pending.push(kept);
    pendingBytes += kept.length;
  };
  for await (const raw of stream as AsyncIterable<Buffer | string>) {
    const chunk = typeof raw === 'string' ? Buffer.from(raw) : raw;
    onBytes?.(chunk.length);
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, newline);
      if (pendingBytes + piece.length > MAX_LINE_BYTES) {
        keep(piece);
        yield line(Buffer.alloc(0));
      } else {
        yield line(piece);
      }
      start = newline + 1;
    }
    if (start < chunk.length) keep(Buffer.from(chunk.subarray(start)));
  }
  if (pendingBytes > 0) yield line(Buffer.alloc(0));
}

/** The lines of a stream as UTF-8 text (linesOf), without U+0000 and the first line without a byte-order mark. */
export function readLines(
  stream: Readable,
  onBytes?: (bytes: number) => void,
): AsyncGenerator<{ line: string; number: number }> {
  return linesOf(
    stream,
    (bytes, number) => {
      const text = withoutNul(bytes.toString('utf8'));
      return { line: number === 1 ? text.replace(/^\uFEFF/, '') : text, number };
    },
    onBytes,
  );
}

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * The lines of a stream as their bytes (linesOf), the first without a UTF-8 byte-order mark: for
 * inputs whose text is in no one encoding (a URL dump keeps each URL's original bytes).
 */
export function readByteLines(
  stream: Readable,
  onBytes?: (bytes: number) => void,
): AsyncGenerator<{ bytes: Buffer; number: number }> {
  return linesOf(
    stream,
    (bytes, number) => ({
      bytes: number === 1 && bytes.subarray(0, 3).equals(UTF8_BOM) ? bytes.subarray(3) : bytes,
      number,
    }),
    onBytes,
  );
}

/**
 * The records of a JSON Lines input (a file or `-`), one a line, blank lines skipped, with
 * progress over its bytes: `parse` makes a line's value a record, the reason it is none, or null
 * when it is nothing to keep.
 */
export async function* recordsOfJsonLines<T>(
  input: string,
  parse: (value: unknown) => T | string | null,
  progress?: IngestProgress,
): AsyncGenerator<ReadRecord<T>> {
  const { stream, size } = openInput(input);
  if (size !== null) progress?.start(input, size, 'bytes');
  try {
    for await (const { line, number } of readLines(stream, (bytes) => progress?.advance(bytes))) {
      if (line.trim() === '') continue;
      let value: unknown;
      try {
        value = parseJson(line);
      } catch {
        // readLines cut the line at MAX_LINE_BYTES: say so rather than blame the JSON.
        const cut = Buffer.byteLength(line) >= MAX_LINE_BYTES - 3;
        yield {
          location: `line ${number}`,
          record: cut ? `longer than ${MAX_LINE_BYTES >> 20} MiB (a line is read up to that)` : 'not valid JSON',
        };
        continue;
      }
      const record = parse(value);
      if (record !== null) yield { location: `line ${number}`, record };
    }
  } finally {
    if (input !== '-') stream.destroy();
  }
}

/** Rejections kept per input in a report; the count covers them all. */
export const REJECTIONS_SHOWN = 100;

/** The per-input outcome most ingesters report. */
export interface InputResult {
  input: string;
  ok: boolean;
  records: number;
  added: number;
  duplicates: number;
  rejected: number;
  rejections: Rejection[];
  /** Values stored as null rather than guessed, per reason: how many and the first places. */
  warnings: Record<string, { count: number; examples: string[] }>;
  error?: string;
}

export function newInputResult(input: string): InputResult {
  return { input, ok: true, records: 0, added: 0, duplicates: 0, rejected: 0, rejections: [], warnings: {} };
}

/** Values an ingest could not read unambiguously and stored as null: why, how many, the first places. */
export interface IngestWarning {
  reason: string;
  count: number;
  /** `file line 12` */
  examples: string[];
}

/** Places kept per warning reason in a report; the count covers them all. */
export const WARNING_EXAMPLES = 5;

/** A value of the record at `location` was stored as null for `reason` (a date in the future…). */
export function warn(result: Pick<InputResult, 'warnings'>, location: string, reason: string): void {
  const entry = (result.warnings[reason] ??= { count: 0, examples: [] });
  entry.count++;
  if (entry.examples.length < WARNING_EXAMPLES) entry.examples.push(location);
}

/**
 * An input that could not be read is a failed result: an IngestError, or a system error opening or
 * reading it (one EACCES file does not stop the others). Any other error is a fault and goes on.
 */
export function failInput(result: InputResult, error: unknown): void {
  if (error instanceof IngestError) result.error = error.message;
  else if (error instanceof Error && inputErrors.has(error))
    result.error = new IngestError(result.input, 'read', error.message).message;
  else throw error;
  result.ok = false;
}

export function reject(result: InputResult, location: string, reason: string): void {
  result.rejected++;
  if (result.rejections.length < REJECTIONS_SHOWN) result.rejections.push({ location, reason });
}

/**
 * Stores the records of one input through `write`, `batchSize` at a time (a transaction each: a
 * crash loses at most one uncommitted batch, never part of a record), counting them and rejecting
 * the reasons into `result`. An input that cannot be read fails the result (failInput). Then the
 * input's `stream` is closed and `progress` hears the input's line.
 */
export async function storeInBatches<T>(options: {
  result: InputResult;
  records: AsyncIterable<ReadRecord<T>>;
  batchSize: number;
  write(batch: T[]): Promise<{ added: number; duplicates: number }>;
  /** Store the records read before a failure too: they are whole without the rest of the input. */
  keepBeforeFailure?: boolean;
  /** The input's stream, destroyed when done; standard input, the process's own, is left open. */
  stream?: Readable;
  /** What the records are called in the input's line: `certificates`. */
  noun: string;
  progress?: IngestProgress;
}): Promise<void> {
  const { result } = options;
  let batch: T[] = [];
  const flush = async () => {
    const counts = await options.write(batch);
    result.added += counts.added;
    result.duplicates += counts.duplicates;
    batch = [];
  };
  try {
    try {
      for await (const { location, record, warnings } of options.records) {
        if (typeof record === 'string') {
          reject(result, location, record);
          continue;
        }
        for (const reason of warnings ?? []) warn(result, location, reason);
        result.records++;
        batch.push(record);
        if (batch.length >= options.batchSize) await flush();
      }
    } catch (error) {
      failInput(result, error);
    }
    if (result.ok || options.keepBeforeFailure) await flush();
  } finally {
    if (options.stream !== process.stdin) options.stream?.destroy();
  }
  options.progress?.finish(inputLine(options.noun, result));
}

/** A summary and readable lines for the inputs of one `dragnet ingest` call. */
export function reportInputs(noun: string, results: InputResult[], extra: Record<string, unknown> = {}) {
  const sum = (key: 'records' | 'added' | 'duplicates' | 'rejected') => results.reduce((n, r) => n + r[key], 0);
  const summary = {
    inputs: results.length,
    failed: results.filter((r) => !r.ok).length,
    records: sum('records'),
    added: sum('added'),
    duplicates_skipped: sum('duplicates'),
    rejected: sum('rejected'),
    ...extra,
    warnings: warningsOf(results),
    results,
  };
  const errors = results.flatMap((result) => [
    ...(result.ok ? [] : [{ location: result.input, reason: result.error ?? 'could not be read' }]),
    ...result.rejections.map((rejection) => ({
      location: `${result.input} ${rejection.location}`,
      reason: rejection.reason,
    })),
  ]);
  const warnings = warningsOf(results);
  const tally = {
    records: summary.records,
    added: summary.added,
    duplicates: summary.duplicates_skipped,
    rejected: summary.rejected,
    errors: errors.slice(0, REJECTIONS_SHOWN),
    warnings,
  };
  const lines = [
    `${summary.inputs} inputs (${summary.failed} failed): ${summary.records} ${noun} read, ${summary.added} added, ${summary.duplicates_skipped} duplicates skipped, ${summary.rejected} rejected`,
    ...warningLines(warnings),
  ];
  for (const result of results) {
    for (const rejection of result.rejections.slice(0, 20))
      lines.push(`  rejected ${result.input} ${rejection.location}: ${rejection.reason}`);
    if (result.rejected > 20) lines.push(`  … and ${result.rejected - 20} more rejected in ${result.input}`);
    if (!result.ok) lines.push(`  error: ${result.error}`);
  }
  return { summary, lines, failed: summary.failed > 0, tally };
}

/** The warnings of several inputs per reason, the most frequent first, places named `file line 3`. */
export function warningsOf(results: Pick<InputResult, 'input' | 'warnings'>[]): IngestWarning[] {
  const byReason = new Map<string, IngestWarning>();
  for (const result of results) {
    for (const [reason, { count, examples }] of Object.entries(result.warnings)) {
      const entry = byReason.get(reason) ?? { reason, count: 0, examples: [] };
      entry.count += count;
      for (const example of examples)
        if (entry.examples.length < WARNING_EXAMPLES) entry.examples.push(`${result.input} ${example}`);
      byReason.set(reason, entry);
    }
  }
  return [...byReason.values()].sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason));
}

/** The report lines that say which values were stored as null, and where. */
export const warningLines = (warnings: IngestWarning[]): string[] =>
  warnings.map(
    (entry) => `  warning: ${entry.reason}: ${entry.count} (stored as null; e.g. ${entry.examples.join(', ')})`,
  );

/** The line a progress display prints when one input is done. */
export const inputLine = (noun: string, result: InputResult): string =>
  result.ok
    ? `${result.input}: ${result.records} ${noun} read, ${result.added} added, ${result.duplicates} duplicates skipped, ${result.rejected} rejected`
    : `${result.input}: FAILED: ${result.error ?? ''}`;

/**
 * Standard input kept in the data folder while it is read, so that detection can look at its
 * start, a hash can be taken of it and a format can read it as a file; a folder of its own names
 * it `stdin` wherever an error does. The folder goes when `use` is done.
 */
export async function withSpooledStdin<T>(dataDir: string, use: (file: string) => Promise<T>): Promise<T> {
  const folder = path.join(dataDir, 'incoming', `stdin-${randomBytes(8).toString('hex')}`);
  mkdirSync(folder, { recursive: true });
  const file = path.join(folder, 'stdin');
  try {
    await pipeline(process.stdin, createWriteStream(file));
    return await use(file);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
