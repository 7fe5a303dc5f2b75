import type { Readable } from 'node:stream';
import { parse } from 'csv-parse/sync';
import { readLines } from '../../ingest/ingest-kit.ts';
import { cardRecord, type CardFields, type CardRecord, type ReadCard } from '../card-record.ts';

/** A record of an input, or the reason its line is not one, by line number; with the reasons for values stored as null. */
export interface ParsedCard {
  line: number;
  record: CardRecord | string;
  warnings?: string[];
}

export const parsedCard = (line: number, read: ReadCard | string): ParsedCard =>
  typeof read === 'string' ? { line, record: read } : { line, record: read.record, warnings: read.warnings };

const MAX_LINE = 4096;
const SHAPE = 'expected PAN|MM|YY|CVV|name|… or PAN|MM/YY|CVV|name|…';

// Ties go to the pipe: a name or address field may hold a comma, rarely a pipe.
const DELIMITERS = ['|', '\t', ';', ','];

/** The delimiter a line uses most (comma when it has none). */
export function delimiterOf(line: string): string {
  const counts = DELIMITERS.map((delimiter) => line.split(delimiter).length - 1);
  const most = Math.max(...counts);
  return most === 0 ? ',' : DELIMITERS[counts.indexOf(most)]!;
}

/** A header-less line's fields; quoted ones ("Doe, John") as CSV quotes them. */
function fieldsOf(text: string): string[] {
  const delimiter = delimiterOf(text);
  if (!text.includes('"')) return text.split(delimiter).map((part) => part.trim());
  const rows = parse(text, { delimiter, relax_quotes: true, relax_column_count: true, trim: true }) as string[][];
  return rows[0] ?? [];
}

/** Whether a line is a positional card line: its first field a card number (digits, maybe grouped). */
export const startsWithPan = (line: string): boolean => /^\d[\d -]{10,22}\d$/.test(fieldsOf(line.trim())[0] ?? '');

// A month (number or name) alone: the expiry is split over two fields.
const MONTH_ONLY = /^(\d{1,2}|[a-z]{3,9}\.?)$/i;

/**
 * One line of a card dump (docs/ingest.md "Card dumps"), fields split by `|` (or tab, `;`, `,`):
 *   PAN|MM|YY|CVV|name|address|city|state|zip|country|phone|email
 *   PAN|MM/YY|CVV|name|…   (also MM/YYYY, MM-YY, MMYY, YYYY-MM)
 * The CVV may be empty or left out (PAN|MM|YY|name). Fields after the name are positional
 * guesses at best, so they are not read. Returns null for blank and `#` comment lines.
 */
export function parsePipeLine(line: string): ReadCard | string | null {
  const text = line.trim();
  if (text === '' || text.startsWith('#')) return null;
  if (text.length > MAX_LINE) return `line longer than ${MAX_LINE} characters`;
  const parts = fieldsOf(text);
  if (parts.length < 2) return SHAPE;
  const fields: CardFields = { pan: parts[0]! };
  let next: number;
  if (MONTH_ONLY.test(parts[1]!)) {
    fields.month = parts[1];
    fields.year = parts[2];
    next = 3;
  } else {
    fields.expiry = parts[1];
    next = 2;
  }
  // Digits (or nothing) where the CVV goes are the CVV column; anything else is already the name.
  const cvv = parts[next];
  if (cvv !== undefined && /^\d*$/.test(cvv)) {
    fields.cvv = cvv;
    next++;
  }
  fields.name = parts[next];
  return cardRecord(fields);
}

export async function* readPipeDump(stream: Readable): AsyncGenerator<ParsedCard> {
  for await (const { line, number } of readLines(stream)) {
    const read = parsePipeLine(line);
    if (read !== null) yield parsedCard(number, read);
  }
}
