import { createReadStream, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { ChannelBatch, CorpusWriter } from './corpus-writer.ts';
import {
  expandInputs,
  jsonErrorLocation,
  parseJson,
  warn,
  type IngestProgress,
  type InputResult,
} from '../../common/ingest/ingest-kit.ts';
import { IngestError, type Rejection, type WarnAt } from './ingest-errors.ts';
import { readJsonLines } from './jsonl.ts';
import { parseTelegramExport } from './telegram-export.ts';

export type IngestFormat = 'auto' | 'telegram' | 'jsonl';

export interface SourceResult {
  source: string;
  format: 'telegram' | 'jsonl';
  ok: boolean;
  channels: number;
  added: number;
  duplicates: number;
  rejected: Rejection[];
  /** Values not stored, per reason (an edit dated in the future). */
  warnings: InputResult['warnings'];
  error?: string;
}

const SOURCE_EXTENSIONS = new Set(['.json', '.jsonl', '.ndjson']);

/** Files named by the arguments; folders are walked for .json, .jsonl and .ndjson files. */
export const expandSources = (args: string[]): string[] =>
  expandInputs(args, (file) => SOURCE_EXTENSIONS.has(path.extname(file).toLowerCase()));

/** The line a progress display prints when one source is done. */
export const sourceLine = (result: SourceResult): string =>
  result.ok
    ? `${result.source}: ${result.channels} channels, ${result.added} messages added, ${result.duplicates} duplicates skipped, ${result.rejected.length} rejected`
    : `${result.source}: FAILED, ${result.added ? `${result.added} messages stored before it` : 'nothing stored'}: ${(result.error ?? '').replace(`${result.source}: `, '')}`;

async function readAll(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

function parseTelegramText(text: string, source: string, rejected: Rejection[], warnAt: WarnAt): ChannelBatch[] {
  let document: unknown;
  try {
    document = parseJson(text);
  } catch (error) {
    throw new IngestError(source, jsonErrorLocation(text, error), 'malformed JSON');
  }
  return parseTelegramExport(document, source, rejected, warnAt);
}

/**
 * One JSON document with messages or chats is an export; so is text that starts with "{" but
 * whose first line is not a JSON object of its own (a pretty-printed export, even a broken
 * one, whose error should then point into the export rather than at "line 1" of JSON Lines).
 */
function isTelegramExport(text: string): boolean {
  try {
    const document = parseJson(text);
    return typeof document === 'object' && document !== null && ('messages' in document || 'chats' in document);
  } catch {
    const firstLine = text.split('\n').find((line) => line.trim()) ?? '';
    if (!firstLine.trim().startsWith('{')) return false;
    try {
      JSON.parse(firstLine);
      return false;
    } catch {
      return true;
    }
  }
}

export function createIngestService(deps: { writer: CorpusWriter }) {
  async function ingestOne(
    source: string,
    format: IngestFormat,
    defaults: { category?: string },
    progress?: IngestProgress,
  ): Promise<SourceResult> {
    const rejected: Rejection[] = [];
    const warnings: SourceResult['warnings'] = {};
    const warnAt: WarnAt = (location, reason) => warn({ warnings }, location, reason);
    const extension = path.extname(source).toLowerCase();
    let resolved: 'telegram' | 'jsonl' = format === 'auto' ? (extension === '.json' ? 'telegram' : 'jsonl') : format;
    const result = (partial: Partial<SourceResult>): SourceResult => ({
      source,
      format: resolved,
      ok: true,
      channels: 0,
      added: 0,
      duplicates: 0,
      rejected,
      warnings,
      ...partial,
    });
    const withCategory = (batch: ChannelBatch): ChannelBatch =>
      defaults.category && !batch.channel.category
        ? { ...batch, channel: { ...batch.channel, category: defaults.category } }
        : batch;

    // Filled as the writer commits: a source that fails half-way keeps what it committed.
    const totals = { channels: 0, added: 0, duplicates: 0 };
    try {
      let batches: AsyncIterable<ChannelBatch> | ChannelBatch[];
      if (source === '-') {
        // Standard input: a whole Telegram export (one JSON document with messages or chats),
        // otherwise JSON Lines.
        const text = await readAll(process.stdin);
        resolved = format === 'auto' ? (isTelegramExport(text) ? 'telegram' : 'jsonl') : format;
        batches =
          resolved === 'telegram'
            ? parseTelegramText(text, 'stdin', rejected, warnAt)
            : readJsonLines(Readable.from([text]), 'stdin', rejected, undefined, warnAt);
      } else if (resolved === 'telegram') {
        batches = parseTelegramText(await readFile(source, 'utf8'), source, rejected, warnAt);
      } else {
        progress?.start(source, statSync(source).size, 'bytes');
        batches = readJsonLines(
          createReadStream(source),
          source,
          rejected,
          (bytes) => progress?.advance(bytes),
          warnAt,
        );
      }
      if (Array.isArray(batches)) {
        progress?.start(
          source,
          batches.reduce((n, b) => n + b.messages.length, 0),
          'messages',
        );
      }
      const mapped = (async function* () {
        for await (const batch of batches) yield withCategory(batch);
      })();
      await deps.writer.write(mapped, Array.isArray(batches) ? (n) => progress?.advance(n) : undefined, totals);
      const done = result(totals);
      progress?.finish(sourceLine(done));
      return done;
    } catch (error) {
      if (!(error instanceof IngestError)) throw error;
      const failed = result({ ...totals, ok: false, error: error.message });
      progress?.finish(sourceLine(failed));
      return failed;
    }
  }

  return {
    async ingest(
      sources: string[],
      options: { format?: IngestFormat; category?: string; progress?: IngestProgress } = {},
    ) {
      const results: SourceResult[] = [];
      for (const source of expandSources(sources)) {
        results.push(
          await ingestOne(source, options.format ?? 'auto', { category: options.category }, options.progress),
        );
      }
      return results;
    },
  };
}
