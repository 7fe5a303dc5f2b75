import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
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
import { delimiterOf, readPipeDump, startsWithPan, type ParsedCard } from './parsers/pipe-dump.ts';
import { namesCardColumn, readShopCsv } from './parsers/shop-csv.ts';
import { hasTrackData, readTrackDump } from './parsers/track-data.ts';
import { detectFormat, peekInput, type DetectableFormat } from '../ingest/format-detection.ts';

/** `dragnet ingest credit_card|bin_cvv` (card dumps, shop CSVs) and `dragnet ingest bins` (docs/ingest.md). */

const CARD_FILES = new Set(['.txt', '.csv', '.tsv', '.dump', '.dmp', '.log']);
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

/** The first lines of a head that are not blank or `#` comments. */
const dataLines = (head: string, count: number): string[] =>
  head
    .split(/\r?\n/, 1000)
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .slice(0, count);

const firstLine = (head: string): string => dataLines(head, 1)[0] ?? '';

// A dump may open with a banner or a title line or two before its first card.
const DUMP_LINES_CHECKED = 10;

interface CardFormat extends DetectableFormat {
  read(stream: Readable, input: string, head: string): AsyncGenerator<ParsedCard>;
}

// Detection order: a header naming a card column is a CSV whatever its rows hold; a first field
// that is a card number (on one of the first lines) is a positional dump; track data anywhere
// in the head is a track dump.
const CARD_FORMATS: CardFormat[] = [
  {
    name: 'csv',
    writtenBy: 'card shops, checkers and spreadsheet exports: CSV with a header row, , ; | or tab',
    detect: (head) => {
      const header = firstLine(head);
      return namesCardColumn(header, delimiterOf(header));
    },
    read: (stream, input, head) => readShopCsv(stream, { input, delimiter: delimiterOf(firstLine(head)) }),
  },
  {
    name: 'pipe',
    writtenBy: 'card dumps without a header: PAN|MM|YY|CVV|name|… (or , ; tab)',
    detect: (head) => dataLines(head, DUMP_LINES_CHECKED).some(startsWithPan),
    read: (stream) => readPipeDump(stream),
  },
  {
    name: 'track',
    writtenBy: 'magnetic-stripe dumps: ISO/IEC 7813 track 1 (%B…^…^YYMM…?) and track 2 (;…=YYMM…?) data',
    detect: (head) => hasTrackData(head),
    read: (stream) => readTrackDump(stream),
  },
];

/** The input's cards in the format given, or (auto) the one its head is in. */
async function* cardsOf(
  source: string,
  input: string,
  peeked: { head: string; stream: Readable },
  format: string,
): AsyncGenerator<ReadRecord<CardRecord>> {
  const { head, stream } = peeked;
  const chosen =
    format === 'auto'
      ? detectFormat(source, input, head, CARD_FORMATS)
      : CARD_FORMATS.find((known) => known.name === format)!;
  for await (const { line, record, warnings } of chosen.read(stream, input, head))
    yield { location: `line ${line}`, record, warnings };
}

interface CardIngest {
  source: string;
  writer: CardWriter;
  format: string;
  progress?: IngestProgress;
}

async function ingestCards(
  context: SourceContext,
  input: string,
  { source, writer, format, progress }: CardIngest,
): Promise<InputResult> {
  const result = newInputResult(input);
  const { head, stream, size } = await peekInput(input);
  if (size !== null) progress?.start(input, size, 'bytes');
  const file = { name: input === '-' ? 'stdin' : path.basename(input), discoveredAt: context.clock.now().getTime() };
  await storeInBatches({
    result,
    records: cardsOf(source, input, { head, stream: counted(stream, progress) }, format),
    batchSize: BATCH,
    write: (batch) => writer.write(batch, file),
    stream,
    noun: 'cards',
    progress,
  });
  return result;
}

/** Card dumps and shop exports into the card store both card sources read. */
export const cardIngester = (name: string, description: string): Ingester => ({
  name,
  description,
  formats: ['auto', ...CARD_FORMATS.map((format) => format.name)],
  async run(context, inputs, options) {
    const writer = createCardWriter(context, await loadBinTable(context));
    const results: InputResult[] = [];
    for (const input of expandInputs(inputs, (file) => CARD_FILES.has(path.extname(file).toLowerCase()))) {
      results.push(
        await ingestCards(context, input, { source: name, writer, format: options.format, progress: options.progress }),
      );
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
          if (results.some((result) => !result.ok) || results.every((result) => result.added === 0))
            throw new TableKept();
          const table = await readBinTable(tx);
          return { prefixes: table.size, cards: await reenrichCards(tx, table, context.keys) };
        });
    } catch (error) {
      if (!(error instanceof TableKept)) throw error;
    }
    const report = reportInputs('BIN ranges', results, {
      replaced: replaced !== null,
      prefixes: replaced?.prefixes ?? 0,
      cards_reenriched: replaced?.cards ?? 0,
    });
    report.lines.push(
      replaced
        ? `BIN table replaced: ${replaced.prefixes} prefixes; ${replaced.cards} stored cards re-enriched`
        : 'BIN table unchanged: an input failed or held no valid prefix',
    );
    return { ...report, failed: replaced === null };
  },
};
