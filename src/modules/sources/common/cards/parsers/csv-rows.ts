import type { Readable } from 'node:stream';
import { parse, type CsvError } from 'csv-parse';

export type CsvRow<K extends string> =
  { line: number; row: Partial<Record<K, string>> } | { line: number; error: string };

/**
 * The rows of a CSV stream with a header row, as objects keyed by what `columns` makes of the
 * header (false: a column not read). `columns` may throw to refuse the file. A row csv-parse
 * cannot read (an unclosed quote) comes out as an error with its line, and reading goes on.
 */
export async function* readCsvRows<K extends string>(
  stream: Readable,
  options: { delimiter?: string; columns: (header: string[]) => (K | false)[] },
): AsyncGenerator<CsvRow<K>> {
  const skipped: CsvRow<K>[] = [];
  const parser = parse({
    bom: true,
    delimiter: options.delimiter ?? ',',
    columns: options.columns,
    info: true,
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    trim: true,
    on_skip: (error: CsvError | undefined) => {
      skipped.push({ line: Number(error?.lines ?? 0), error: `malformed CSV (${error?.code ?? 'unreadable row'})` });
    },
  });
  // pipe() does not pass a read error on; without this the loop below would wait forever.
  stream.on('error', (error) => parser.destroy(error));
  stream.pipe(parser);
  for await (const { record, info } of parser as AsyncIterable<{
    record: Partial<Record<K, string>>;
    info: { lines: number };
  }>) {
    // csv-parse reports a skipped row as soon as it reads it, which may be before the rows
    // above it come out of the stream: keep line order.
    while (skipped.length && skipped[0]!.line < info.lines) yield skipped.shift()!;
    yield { line: info.lines, row: record };
  }
  yield* skipped.splice(0);
}
