import type { Readable } from 'node:stream';
import { IngestError } from '../../ingest/ingest-kit.ts';
import { cardRecord, type CardFields } from '../card-record.ts';
import { readCsvRows } from './csv-rows.ts';
import type { ParsedCard } from './pipe-dump.ts';

type Column = keyof CardFields | 'firstName' | 'lastName';

/**
 * Header names of shop exports, compared in lower case without spaces or punctuation
 * ("Card Number" = "card_number" = "cardnumber"). Columns not listed here (address, city, zip,
 * phone, email, …) are not read.
 */
const HEADER_NAMES: Record<Column, string[]> = {
  pan: ['cardnumber', 'cardno', 'cardnum', 'ccnumber', 'ccnum', 'ccn', 'cc', 'pan', 'number', 'card', 'creditcard'],
  expiry: ['exp', 'expiry', 'expiration', 'expdate', 'expirydate', 'expirationdate', 'expires', 'expire', 'validthru'],
  month: ['month', 'expmonth', 'expirymonth', 'expm', 'mm'],
  year: ['year', 'expyear', 'expiryyear', 'expy', 'yy', 'yyyy'],
  cvv: ['cvv', 'cvc', 'cvv2', 'cvc2', 'cid', 'csc', 'securitycode'],
  name: ['name', 'holder', 'cardholder', 'holdername', 'cardholdername', 'nameoncard', 'fullname'],
  firstName: ['firstname', 'fname'],
  lastName: ['lastname', 'lname', 'surname'],
  state: ['state', 'region', 'province'],
  country: ['country', 'billingcountry'],
  price: ['price', 'cost', 'priceusd'],
  base: ['base', 'basename'],
  shop: ['shop', 'seller', 'vendor', 'store'],
  level: ['level', 'cardlevel'],
  type: ['type', 'cardtype'],
  bank: ['bank', 'issuer', 'bankname'],
  brand: ['brand', 'scheme', 'cardbrand'],
};

const columnByHeader = new Map(Object.entries(HEADER_NAMES).flatMap(([column, names]) => names.map((name) => [name, column as Column] as const)));

/** The column each header cell names (false: not read); the first of two same-meaning columns wins. */
export function headerColumns(header: string[]): (Column | false)[] {
  const seen = new Set<Column>();
  return header.map((cell) => {
    const column = columnByHeader.get(cell.toLowerCase().replace(/[^a-z0-9]/g, ''));
    if (!column || seen.has(column)) return false;
    seen.add(column);
    return column;
  });
}

function checkHeader(input: string, columns: (Column | false)[]): void {
  if (!columns.includes('pan')) throw new IngestError(input, 'line 1', 'the header row names no card-number column (card number, cc, pan, …)');
  if (!columns.includes('expiry') && !(columns.includes('month') && columns.includes('year'))) {
    throw new IngestError(input, 'line 1', 'the header row names no expiry column (exp, expiry, or month and year)');
  }
}

const DELIMITERS = [',', ';', '\t', '|'];

/** The delimiter a header line uses most (comma when it has none). */
export function delimiterOf(headerLine: string): string {
  const counts = DELIMITERS.map((delimiter) => headerLine.split(delimiter).length - 1);
  const most = Math.max(...counts);
  return most === 0 ? ',' : DELIMITERS[counts.indexOf(most)]!;
}

/**
 * The cards of a shop CSV export: a header row naming the columns, then one card a row, parsed
 * as a stream. A malformed row (an unclosed quote) is rejected with its line; the rest is read.
 */
export async function* readShopCsv(stream: Readable, options: { input: string; delimiter: string }): AsyncGenerator<ParsedCard> {
  const rows = readCsvRows<Column>(stream, {
    delimiter: options.delimiter,
    columns: (header) => {
      const columns = headerColumns(header);
      checkHeader(options.input, columns);
      return columns;
    },
  });
  for await (const parsed of rows) {
    if ('error' in parsed) {
      yield { line: parsed.line, record: parsed.error };
      continue;
    }
    const { firstName, lastName, ...fields } = parsed.row;
    const name = fields.name ?? ([firstName, lastName].filter(Boolean).join(' ') || undefined);
    yield { line: parsed.line, record: cardRecord({ ...fields, pan: fields.pan ?? '', name }) };
  }
}
