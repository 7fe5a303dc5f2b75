import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, renameSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Generated } from 'kysely';
import type { SourceContext } from '../kit/source.ts';

/** Lines are indexed per block of this size; the scan reads blocks of the same size. */
export const BLOCK = 1 << 20;

export const FILE_TYPES = ['txt', 'csv', 'sql', 'json', 'log', 'xml'] as const;

// A type alias, not an interface: withTables needs an index-signature-compatible type.
export type RawLeakTables = {
  raw_leak_files: {
    id: Generated<number>;
    sha256: string;
    name: string;
    file_type: string;
    size: number;
    lines: number;
    line_index: string;
    indexed_at: number;
  };
};

export const rawLeakDb = (context: SourceContext) => context.db.withTables<RawLeakTables>();

export const rawLeakFolder = (context: SourceContext) => path.join(context.dataDir, 'raw-leaks');

export const storedPath = (context: SourceContext, sha256: string) => path.join(rawLeakFolder(context), sha256);

/** A file's kind from its name: one of FILE_TYPES, `txt` for anything else. */
export function fileTypeOf(name: string): string {
  const extension = path.extname(name).slice(1).toLowerCase();
  if (extension === 'ndjson' || extension === 'jsonl') return 'json';
  return (FILE_TYPES as readonly string[]).includes(extension) ? extension : 'txt';
}

export interface StoredFile {
  sha256: string;
  size: number;
  lines: number;
  binary: boolean;
  added: boolean;
}

/**
 * Copies a stream into the store: hashed, lines counted and indexed per block on the way, then
 * renamed to its hash (a file already stored is reported as a duplicate). A file
 * with NUL bytes is binary, not a text leak, and is not kept.
 */
export async function storeRawFile(
  context: SourceContext,
  input: Readable,
  name: string,
  onBytes?: (bytes: number) => void,
): Promise<StoredFile> {
  const folder = rawLeakFolder(context);
  mkdirSync(folder, { recursive: true });
  const temporary = path.join(folder, `.incoming-${randomBytes(8).toString('hex')}`);
  const out = createWriteStream(temporary);
  const hash = createHash('sha256');
  const lineIndex = [0];
  let size = 0;
  let newlines = 0;
  let binary = false;
  let lastByte = 10;
  try {
    for await (const chunk of input as AsyncIterable<Buffer>) {
      hash.update(chunk);
      if (!binary && chunk.indexOf(0) !== -1) binary = true;
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) {
        const absolute = size + at;
        while (lineIndex.length * BLOCK <= absolute) lineIndex.push(newlines);
        newlines++;
      }
      size += chunk.length;
      lastByte = chunk.length ? chunk[chunk.length - 1]! : lastByte;
      onBytes?.(chunk.length);
      if (!out.write(chunk)) await once(out, 'drain');
    }
    while (lineIndex.length * BLOCK <= size) lineIndex.push(newlines);
    out.end();
    await once(out, 'finish');
  } catch (error) {
    out.destroy();
    rmSync(temporary, { force: true });
    throw error;
  }
  const sha256 = hash.digest('hex');
  const lines = newlines + (size > 0 && lastByte !== 10 ? 1 : 0);
  if (binary) {
    rmSync(temporary, { force: true });
    return { sha256, size, lines, binary, added: false };
  }
  // The file takes its final name before its row exists: a crash in between leaves a file
  // without a row (ingested again next time), never a row without its file.
  renameSync(temporary, storedPath(context, sha256));
  const inserted = await rawLeakDb(context)
    .insertInto('raw_leak_files')
    .values({
      sha256,
      name,
      file_type: fileTypeOf(name),
      size,
      lines,
      line_index: JSON.stringify(lineIndex),
      indexed_at: context.clock.now().getTime(),
    })
    .onConflict((oc) => oc.column('sha256').doNothing())
    .returning('id')
    .executeTakeFirst();
  return { sha256, size, lines, binary, added: Boolean(inserted) };
}

export const openStored = (context: SourceContext, sha256: string) =>
  createReadStream(storedPath(context, sha256), { highWaterMark: BLOCK });
