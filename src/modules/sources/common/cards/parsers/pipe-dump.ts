import type { Readable } from 'node:stream';
import { readLines } from '../../ingest/ingest-kit.ts';
import { cardRecord, combinedExpiry, type CardFields, type CardRecord } from '../card-record.ts';

/** A record of an input, or the reason its line is not one, by line number. */
export interface ParsedCard {
  line: number;
  record: CardRecord | string;
}

const MAX_LINE = 4096;
const SHAPE = 'expected PAN|MM|YY|CVV|name|… or PAN|MM/YY|CVV|name|…';

/**
 * One line of a card dump (docs/ingest.md "Card dumps"):
 *   PAN|MM|YY|CVV|name|address|city|state|zip|country|phone|email
 *   PAN|MM/YY|CVV|name|…   (also MM/YYYY, MM-YY, MMYY)
 * The CVV may be empty or left out (PAN|MM|YY|name). Fields after the name are positional
 * guesses at best, so they are not read. Returns null for blank and `#` comment lines.
 */
export function parsePipeLine(line: string): CardRecord | string | null {
  const text = line.trim();
  if (text === '' || text.startsWith('#')) return null;
  if (text.length > MAX_LINE) return `line longer than ${MAX_LINE} characters`;
  const parts = text.split('|').map((part) => part.trim());
  if (parts.length < 2) return SHAPE;
  const fields: CardFields = { pan: parts[0]! };
  let next: number;
  if (combinedExpiry(parts[1]!)) {
    fields.expiry = parts[1];
    next = 2;
  } else {
    fields.month = parts[1];
    fields.year = parts[2];
    next = 3;
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
    const record = parsePipeLine(line);
    if (record !== null) yield { line: number, record };
  }
}
