import type { Readable } from 'node:stream';
import { IngestError } from '../../ingest/ingest-kit.ts';
import { cardRecord, type CardFields } from '../card-record.ts';
import { readCsvRows } from './csv-rows.ts';
import { parsedCard, type ParsedCard } from './pipe-dump.ts';
import { trackCards } from './track-data.ts';

type Column = Exclude<keyof CardFields, 'extra'> | 'firstName' | 'lastName' | 'track' | 'personal';

/**
 * Header names of card CSVs (shop exports, checker output, leaked order tables), compared in
 * lower case without spaces or punctuation ("Card Number" = "card_number" = "CardNumber").
 */
const HEADER_NAMES: Record<Column, string[]> = {
  pan: [
    'cardnumber',
    'cardno',
    'cardnum',
    'ccnumber',
    'ccnum',
    'ccno',
    'ccn',
    'cc',
    'pan',
    'number',
    'card',
    'creditcard',
    'creditcardnumber',
    'accountnumber',
    'acctnumber',
    'cardpan',
  ],
  expiry: [
    'exp',
    'expiry',
    'expiration',
    'expdate',
    'expirydate',
    'expirationdate',
    'expiringdate',
    'expires',
    'expire',
    'validthru',
    'validto',
    'ccexp',
    'cardexpiry',
    'cardexp',
    'mmyy',
  ],
  month: [
    'month',
    'expmonth',
    'expirymonth',
    'expirationmonth',
    'expiringmonth',
    'expm',
    'mm',
    'ccexpmonth',
    'cardexpirymonth',
  ],
  year: [
    'year',
    'expyear',
    'expiryyear',
    'expirationyear',
    'expiringyear',
    'expy',
    'yy',
    'yyyy',
    'ccexpyear',
    'cardexpiryyear',
  ],
  cvv: ['cvv', 'cvc', 'cvv2', 'cvc2', 'cid', 'csc', 'cvn', 'securitycode', 'cardcvv', 'cardcvc', 'cardcode', 'ccv'],
  name: [
    'name',
    'holder',
    'cardholder',
    'holdername',
    'cardholdername',
    'nameoncard',
    'fullname',
    'owner',
    'cardowner',
    'billingname',
  ],
  firstName: ['firstname', 'fname', 'givenname'],
  lastName: ['lastname', 'lname', 'surname', 'familyname'],
  state: ['state', 'region', 'province', 'billingstate'],
  country: ['country', 'billingcountry', 'countrycode'],
  price: ['price', 'cost', 'priceusd'],
  base: ['base', 'basename'],
  shop: ['shop', 'seller', 'vendor', 'store'],
  level: ['level', 'cardlevel'],
  type: ['type', 'cardtype'],
  bank: ['bank', 'issuer', 'bankname', 'issuingbank'],
  brand: ['brand', 'scheme', 'cardbrand', 'network'],
  track: ['track', 'track1', 'track2', 'tracks', 'tr1', 'tr2', 'dump', 'trackdata'],
  // The holder's personal data: recognised, so it is not kept as an extra field.
  personal: [
    ...[
      'address',
      'address1',
      'address2',
      'addressline1',
      'addressline2',
      'street',
      'billingaddress',
      'city',
      'billingcity',
    ],
    ...['zip', 'zipcode', 'postcode', 'postalcode', 'billingzip', 'phone', 'phonenumber', 'mobile', 'tel', 'telephone'],
    ...[
      'email',
      'emailaddress',
      'mail',
      'dob',
      'dateofbirth',
      'birthdate',
      'ssn',
      'sin',
      'mmn',
      'pin',
      'password',
      'ip',
      'ipaddress',
    ],
  ],
};

const columnByHeader = new Map(
  Object.entries(HEADER_NAMES).flatMap(([column, names]) => names.map((name) => [name, column as Column] as const)),
);

// Headers that name their field with more words than the lists have ("Expiration (MM/YY)",
// "Card Verification Value (CVV)", "Credit Card No."), tried only when no name matches exactly.
const HEADER_PATTERNS: [RegExp, Column][] = [
  [/^(card|cc|credit|debit|payment|primary)\w*(number|num|no|pan)$/, 'pan'],
  [/(cvv|cvc|cvn|securitycode|cardverification)/, 'cvv'],
  [/^exp\w*mmyy/, 'expiry'],
  [/^exp\w*(month|mm)$/, 'month'],
  [/^exp\w*(year|yy|yyyy)$/, 'year'],
  [/^(exp|validthru|validto|carddate)/, 'expiry'],
  [/(holder|nameoncard)/, 'name'],
];

function columnOf(cell: string): Column | undefined {
  const name = cell.toLowerCase().replace(/[^a-z0-9]/g, '');
  return columnByHeader.get(name) ?? HEADER_PATTERNS.find(([pattern]) => pattern.test(name))?.[1];
}

/** A column Dragnet has no field for, kept under its header as the input spells it. */
type ExtraKey = `extra:${string}`;
type Key = Column | ExtraKey;

/**
 * The key of each header cell: its column; `extra:<header>` for one Dragnet has no field for;
 * false for a personal-data column and for the second of two same-meaning columns.
 */
export function headerColumns(header: string[]): (Key | false)[] {
  const seen = new Set<Key>();
  return header.map((cell) => {
    const key: Key = columnOf(cell) ?? `extra:${cell.trim()}`;
    if (key === 'personal' || key === 'extra:' || seen.has(key)) return false;
    seen.add(key);
    return key;
  });
}

/** Whether a header line (split at `delimiter`) names a card-number or track column. */
export function namesCardColumn(headerLine: string, delimiter: string): boolean {
  const columns = headerColumns(headerLine.split(delimiter).map((cell) => cell.replace(/^\s*"|"\s*$/g, '')));
  return columns.includes('pan') || columns.includes('track');
}

function checkHeader(input: string, columns: (Key | false)[]): void {
  if (!columns.includes('pan') && !columns.includes('track')) {
    throw new IngestError(
      input,
      'line 1',
      'the header row names no card-number column (card number, cc, pan, …) and no track column',
    );
  }
}

/**
 * The cards of a card CSV: a header row naming the columns, then one card a row, parsed as a
 * stream. A malformed row (an unclosed quote) is rejected with its line; the rest is read.
 */
export async function* readShopCsv(
  stream: Readable,
  options: { input: string; delimiter: string },
): AsyncGenerator<ParsedCard> {
  const rows = readCsvRows<Key>(stream, {
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
    const { firstName, lastName, track, ...known } = parsed.row as Partial<Record<Column, string>>;
    const extra: Record<string, string> = {};
    for (const [key, value] of Object.entries(parsed.row))
      if (key.startsWith('extra:') && value) extra[key.slice('extra:'.length)] = value;
    // A row whose card is only in its track column.
    const tracks = !known.pan && track ? trackCards(track) : [];
    if (tracks.length) {
      for (const card of tracks) yield parsedCard(parsed.line, card);
      continue;
    }
    const name = known.name ?? ([firstName, lastName].filter(Boolean).join(' ') || undefined);
    yield parsedCard(parsed.line, cardRecord({ ...known, pan: known.pan ?? '', name, extra }));
  }
}
