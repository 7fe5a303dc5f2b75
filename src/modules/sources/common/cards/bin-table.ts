import { fileURLToPath } from 'node:url';
import type { Readable } from 'node:stream';
import { IngestError } from '../ingest/ingest-kit.ts';
import type { CardBrand, CardType } from './card-number.ts';
import { brandOf, cardTypeOf } from './card-record.ts';
import { readCsvRows } from './parsers/csv-rows.ts';

/**
 * The BIN (IIN) table: what a card number's first 6 to 8 digits say about the card. Its rows
 * come from binlist's ranges.csv format (docs/ingest.md "BIN table"); the project ships
 * binlist/data's own table (data/NOTICE) as the default.
 */
export interface BinInfo {
  scheme: CardBrand | null;
  cardType: CardType | null;
  country: string | null;
  bank: string | null;
}

export interface BinEntry {
  prefix: string;
  info: BinInfo;
}

export const DEFAULT_BIN_FILE = fileURLToPath(new URL('./data/binlist-ranges.csv', import.meta.url));

const PREFIX_LENGTHS = [8, 7, 6];

export interface BinTable {
  /** The entry of the longest prefix of `digits` the table holds. */
  lookup(digits: string): BinInfo | null;
  readonly size: number;
}

/** Lookups cost one Map probe per prefix length, longest first. */
export function createBinTable(entries: Iterable<BinEntry>): BinTable {
  const byLength = new Map(PREFIX_LENGTHS.map((length) => [length, new Map<string, BinInfo>()]));
  let size = 0;
  for (const { prefix, info } of entries) {
    const table = byLength.get(prefix.length);
    if (!table || table.has(prefix)) continue;
    table.set(prefix, info);
    size++;
  }
  return {
    size,
    lookup(digits) {
      for (const length of PREFIX_LENGTHS) {
        if (digits.length < length) continue;
        const info = byLength.get(length)!.get(digits.slice(0, length));
        if (info) return info;
      }
      return null;
    },
  };
}

/** One range row guards against a typo (iin_end 49999999) expanding into millions of prefixes. */
export const MAX_RANGE_PREFIXES = 10_000;

const PREFIX = /^\d{6,8}$/;

/** The prefixes of one binlist row: iin_start alone, or every prefix from iin_start to iin_end. */
export function rangePrefixes(start: string, end: string): string[] | string {
  if (!PREFIX.test(start)) return 'iin_start must be 6 to 8 digits';
  if (end === '') return [start];
  if (!PREFIX.test(end) || end.length !== start.length) return 'iin_end must be empty or as many digits as iin_start';
  const count = Number(end) - Number(start) + 1;
  if (count < 1) return 'iin_end is below iin_start';
  if (count > MAX_RANGE_PREFIXES) return `the range holds more than ${MAX_RANGE_PREFIXES} prefixes`;
  return Array.from({ length: count }, (_, i) => String(Number(start) + i).padStart(start.length, '0'));
}

const YES = new Set(['y', 'yes', 'true', '1']);

export function binInfo(row: Record<string, string | undefined>): BinInfo {
  const text = (value: string | undefined) => value?.trim() || null;
  return {
    scheme: brandOf(row.scheme),
    cardType: YES.has((row.prepaid ?? '').trim().toLowerCase()) ? 'prepaid' : cardTypeOf(row.type),
    country: text(row.country)?.toUpperCase() ?? null,
    bank: text(row.bank_name),
  };
}

export interface BinRow {
  line: number;
  entries: BinEntry[] | string;
}

/** The rows of a binlist-format CSV as a stream: each row's prefixes, or why it has none. */
export async function* readBinRanges(stream: Readable, input: string): AsyncGenerator<BinRow> {
  const rows = readCsvRows<string>(stream, {
    columns: (header) => {
      const columns = header.map((cell) => cell.trim().toLowerCase());
      if (!columns.includes('iin_start'))
        throw new IngestError(input, 'line 1', 'the header row names no iin_start column (binlist ranges.csv format)');
      return columns;
    },
  });
  for await (const parsed of rows) {
    if ('error' in parsed) {
      yield { line: parsed.line, entries: parsed.error };
      continue;
    }
    const prefixes = rangePrefixes(parsed.row.iin_start ?? '', parsed.row.iin_end ?? '');
    const info = binInfo(parsed.row);
    yield {
      line: parsed.line,
      entries: typeof prefixes === 'string' ? prefixes : prefixes.map((prefix) => ({ prefix, info })),
    };
  }
}
