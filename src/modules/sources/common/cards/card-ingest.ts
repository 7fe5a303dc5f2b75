import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import {
  expandInputs,
  failInput,
  inputLine,
  newInputResult,
  openInput,
  reportInputs,
  storeInBatches,
  type IngestProgress,
  type InputResult,
  type ReadRecord,
} from '../ingest/ingest-kit.ts';
import type { Ingester, SourceContext } from '../../kit/source.ts';
import { loadBinTable, readBinTable, reenrichCards, writeBinRows } from './bin-store.ts';
import { readBinRanges } from './bin-table.ts';
import type { CardRecord } from './card-record.ts';
import { cardDb, createCardWriter, type CardWriter } from './card-store.ts';
import { readPipeDump } from './parsers/pipe-dump.ts';
import { delimiterOf, readShopCsv } from './parsers/shop-csv.ts';

/** `dragnet ingest credit_card|bin_cvv` (card dumps, shop CSVs) and `dragnet ingest bins` (docs/ingest.md). */

const CARD_FILES = new Set(['.txt', '.csv', '.tsv', '.dump']);
// Enough to hold a first line; a longer one is no card line or header anyway.
const HEAD_BYTES = 64 * 1024;
// Cards per transaction: a crash loses at most one uncommitted batch, never part of a card.
const BATCH = 1000;

/** The stream as it passes, with its bytes reported to the progress display. */
function counted(stream: Readable, progress?: IngestProgress): Readable {
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      progress?.advance(chunk.length);
      done(null, chunk);
    },
  });
  stream.on('error', (error) => counter.destroy(error));
  return stream.pipe(counter);
}

/** The first line of a stream (to tell the format) and the whole stream, first line included. */
async function withFirstLine(stream: Readable): Promise<{ firstLine: string; body: Readable }> {
  const chunks = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const head: Buffer[] = [];
  let size = 0;
  while (size < HEAD_BYTES && !head.some((chunk) => chunk.includes(10))) {
    const next = await chunks.next();
    if (next.done) break;
    head.push(next.value);
    size += next.value.length;
  }
  async function* all() {
    yield* head;
    for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
  }
  const text = Buffer.concat(head).toString('utf8').replace(/^\uFEFF/, '');
  return { firstLine: text.split(/\r?\n/).find((line) => line.trim() !== '') ?? '', body: Readable.from(all(), { objectMode: false }) };
}

/** auto: a first line with `|` is a pipe dump, anything else a CSV with a header row. */
async function* cardsOf(stream: Readable, input: string, format: string): AsyncGenerator<ReadRecord<CardRecord>> {
  const { firstLine, body } = await withFirstLine(stream);
  const resolved = format === 'auto' ? (firstLine.includes('|') ? 'pipe' : 'csv') : format;
  const cards = resolved === 'pipe' ? readPipeDump(body) : readShopCsv(body, { input, delimiter: delimiterOf(firstLine) });
  for await (const { line, record } of cards) yield { location: `line ${line}`, record };
}

async function ingestCards(context: SourceContext, writer: CardWriter, input: string, options: { format: string; progress?: IngestProgress }): Promise<InputResult> {
  const result = newInputResult(input);
  const { stream, size } = openInput(input);
  if (size !== null) options.progress?.start(input, size, 'bytes');
  const source = { name: input === '-' ? 'stdin' : path.basename(input), discoveredAt: context.clock.now().getTime() };
  await storeInBatches({
    result,
    records: cardsOf(counted(stream, options.progress), input, options.format),
    batchSize: BATCH,
    write: (batch) => writer.write(batch, source),
    stream,
    noun: 'cards',
    progress: options.progress,
  });
  return result;
}

/** Card dumps and shop exports into the card store both card sources read. */
export const cardIngester = (name: string, description: string): Ingester => ({
  name,
  description,
  formats: ['auto', 'pipe', 'csv'],
  async run(context, inputs, options) {
    const writer = createCardWriter(context, await loadBinTable(context));
    const results: InputResult[] = [];
    for (const input of expandInputs(inputs, (file) => CARD_FILES.has(path.extname(file).toLowerCase()))) {
      results.push(await ingestCards(context, writer, input, options));
    }
    return reportInputs('cards', results);
  },
});

/** Thrown inside the replacement's transaction to roll it back. */
class TableKept extends Error {}

export const binsIngester: Ingester = {
  name: 'bins',
  description: 'the BIN table of the card sources, replaced as a whole by binlist ranges.csv-format files',
  formats: ['binlist'],
  async run(context, inputs, options) {
    const results: InputResult[] = [];
    let replaced: { prefixes: number; cards: number } | null = null;
    try {
      replaced = await cardDb(context)
        .transaction()
        .execute(async (tx) => {
          await tx.deleteFrom('card_bins').execute();
          for (const input of expandInputs(inputs, (file) => path.extname(file).toLowerCase() === '.csv')) {
            const result = newInputResult(input);
            results.push(result);
            const { stream, size } = openInput(input);
            if (size !== null) options.progress?.start(input, size, 'bytes');
            try {
              await writeBinRows(tx, readBinRanges(counted(stream, options.progress), input), result);
            } catch (error) {
              failInput(result, error);
            } finally {
              if (input !== '-') stream.destroy();
            }
            options.progress?.finish(inputLine('BIN ranges', result));
          }
          // All or nothing: a failed input or an empty table keeps the table there was.
          if (results.some((result) => !result.ok) || results.every((result) => result.added === 0)) throw new TableKept();
          const table = await readBinTable(tx);
          return { prefixes: table.size, cards: await reenrichCards(tx, table, context.keys) };
        });
    } catch (error) {
      if (!(error instanceof TableKept)) throw error;
    }
    const report = reportInputs('BIN ranges', results, { replaced: replaced !== null, prefixes: replaced?.prefixes ?? 0, cards_reenriched: replaced?.cards ?? 0 });
    report.lines.push(
      replaced
        ? `BIN table replaced: ${replaced.prefixes} prefixes; ${replaced.cards} stored cards re-enriched`
        : 'BIN table unchanged: an input failed or held no valid prefix',
    );
    return { ...report, failed: replaced === null };
  },
};
