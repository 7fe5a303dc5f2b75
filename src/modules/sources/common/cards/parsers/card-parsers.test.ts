import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { IngestError } from '../../ingest/ingest-kit.ts';
import {
  AMBIGUOUS_EXPIRY,
  holderInitials,
  parseExpiry,
  priceCents,
  splitExpiry,
  UNREADABLE_EXPIRY,
  type CardRecord,
  type ReadCard,
} from '../card-record.ts';
import { delimiterOf, parsePipeLine, readPipeDump } from './pipe-dump.ts';
import { headerColumns, readShopCsv } from './shop-csv.ts';
import { readTrackDump, trackCards } from './track-data.ts';

// Luhn-valid test numbers (the schemes' published test cards and synthetic ones).
const VISA = '4147200000000002';
const AMEX = '378282246310005';

const card = (value: ReadCard | string | null): CardRecord => {
  if (value === null || typeof value === 'string') throw new Error(`expected a card, got ${String(value)}`);
  return value.record;
};

const collect = async <T>(items: AsyncIterable<T>): Promise<T[]> => {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
};

describe('expiry, price and holder fields', () => {
  it('reads an expiry in one field, in every layout that has one reading', () => {
    const cases: [string, number, number][] = [
      ['03/27', 3, 2027],
      ['3/2027', 3, 2027],
      ['11-28', 11, 2028],
      ['11.28', 11, 2028],
      ['0329', 3, 2029],
      ['032029', 3, 2029],
      ['2030-07', 7, 2030],
      ['2030/7', 7, 2030],
      ['203007', 7, 2030],
      ['2030-07-31', 7, 2030],
      ['12/31/27', 12, 2027],
      ['31/12/2027', 12, 2027],
      ['07/07/27', 7, 2027],
      ['Dec 2027', 12, 2027],
      ['sept. 28', 9, 2028],
    ];
    for (const [text, month, year] of cases) expect(parseExpiry(text), text).toEqual({ month, year });
  });

  it('gives the reason for an expiry it does not store: ambiguous, unreadable or absent', () => {
    expect(parseExpiry('05/06/27')).toBe(AMBIGUOUS_EXPIRY);
    expect(parseExpiry('12/01/2027')).toBe(AMBIGUOUS_EXPIRY);
    for (const bad of ['13/27', '00/27', '03/1999', '3', '0327x', '27/13/27', '2713'])
      expect(parseExpiry(bad), bad).toBe(UNREADABLE_EXPIRY);
    expect(parseExpiry('  ')).toBe('no expiry');
  });

  it('reads a month and a year apart', () => {
    expect(splitExpiry('3', '27')).toEqual({ month: 3, year: 2027 });
    expect(splitExpiry('12', '2031')).toEqual({ month: 12, year: 2031 });
    expect(splitExpiry('March', '2031')).toEqual({ month: 3, year: 2031 });
    expect(splitExpiry('13', '27')).toBe(UNREADABLE_EXPIRY);
    expect(splitExpiry('03', '202')).toBe(UNREADABLE_EXPIRY);
  });

  it('reads prices in dollars as cents', () => {
    expect(priceCents('$12.50')).toBe(1250);
    expect(priceCents('12,5')).toBe(1250);
    expect(priceCents('8 USD')).toBe(800);
    expect(priceCents('free')).toBeNull();
    expect(priceCents(undefined)).toBeNull();
  });

  it('keeps only the initials of a name', () => {
    expect(holderInitials('john a. smith')).toBe('J. A. S.');
    expect(holderInitials('Ødegård Ålund')).toBe('Ø. Å.');
    expect(holderInitials('A B C D')).toBe('A. B. C.');
    expect(holderInitials('  42 ')).toBeNull();
  });
});

describe('parsePipeLine', () => {
  it('reads PAN|MM|YY|CVV|name|address|…', () => {
    const record = card(
      parsePipeLine(`${VISA}|03|27|123|John Smith|1 Main St|Springfield|IL|62701|US|5550100|j@example.test`),
    );
    expect(record).toMatchObject({
      pan: VISA,
      expMonth: 3,
      expYear: 2027,
      hasCvv: true,
      holder: 'J. S.',
      billingState: null,
      billingCountry: null,
    });
    expect(JSON.stringify(record)).not.toContain('123');
    expect(JSON.stringify(record)).not.toContain('Main');
  });

  it('reads PAN|MM/YY|CVV|…, four-digit years and grouped numbers', () => {
    expect(card(parsePipeLine(`${VISA}|03/2027|1234|Jane Roe`))).toMatchObject({
      expMonth: 3,
      expYear: 2027,
      hasCvv: true,
      holder: 'J. R.',
    });
    expect(card(parsePipeLine(`3782 822463 10005 | 11 | 2029 | 4321`))).toMatchObject({
      pan: AMEX,
      expMonth: 11,
      expYear: 2029,
      hasCvv: true,
      holder: null,
    });
  });

  it('reads lines without a CVV: empty, or left out before the name', () => {
    expect(card(parsePipeLine(`${VISA}|03|27||John Smith`))).toMatchObject({ hasCvv: false, holder: 'J. S.' });
    expect(card(parsePipeLine(`${VISA}|03|27|John Smith`))).toMatchObject({ hasCvv: false, holder: 'J. S.' });
    expect(card(parsePipeLine(`${VISA}|03/27`))).toMatchObject({ hasCvv: false, holder: null });
  });

  it('skips blank and comment lines', () => {
    expect(parsePipeLine('   ')).toBeNull();
    expect(parsePipeLine('# exported 2026-03-01')).toBeNull();
  });

  it('says why a line is not a card, without quoting the number', () => {
    const cases: [string, string][] = [
      [`4147200000000004|03|27|123`, 'card number fails the Luhn check'],
      [`41472000|03|27|123`, 'card number must be 12 to 19 digits'],
      [VISA, 'expected PAN|MM|YY|CVV|name|… or PAN|MM/YY|CVV|name|…'],
    ];
    for (const [line, reason] of cases) {
      expect(parsePipeLine(line), line).toBe(reason);
      expect(reason).not.toMatch(/\d{6}/);
    }
  });

  it('keeps a card whose expiry or CVV cannot be read, with them null and the reasons', () => {
    const warned = (line: string) => {
      const read = parsePipeLine(line);
      if (read === null || typeof read === 'string') throw new Error(String(read));
      return { expMonth: read.record.expMonth, hasCvv: read.record.hasCvv, warnings: read.warnings };
    };
    expect(warned(`${VISA}|13|27|123`)).toEqual({ expMonth: null, hasCvv: true, warnings: [UNREADABLE_EXPIRY] });
    expect(warned(`${VISA}|05/06/27|123`)).toEqual({ expMonth: null, hasCvv: true, warnings: [AMBIGUOUS_EXPIRY] });
    expect(warned(`${VISA}|03|27|12`)).toEqual({ expMonth: 3, hasCvv: false, warnings: ['CVV not 3 or 4 digits'] });
  });

  it('reads header-less lines split by tab, semicolon or comma, quoted fields too', () => {
    expect(card(parsePipeLine(`${VISA}\t03/27\t123\tJohn Smith`))).toMatchObject({
      pan: VISA,
      expMonth: 3,
      hasCvv: true,
      holder: 'J. S.',
    });
    expect(card(parsePipeLine(`${VISA};03;2027;123;John Smith`))).toMatchObject({ expYear: 2027, holder: 'J. S.' });
    expect(card(parsePipeLine(`${VISA},03/27,123,"Smith, John"`))).toMatchObject({ hasCvv: true, holder: 'S. J.' });
  });

  it('numbers the lines of a stream', async () => {
    const text = `# header\n${VISA}|03|27|123|A B\n\n4147200000000004|03|27|123\r\n${AMEX}|01|30|4321\n`;
    const parsed = await collect(readPipeDump(Readable.from([text])));
    expect(parsed.map(({ line, record }) => [line, typeof record === 'string' ? record : record.pan])).toEqual([
      [2, VISA],
      [4, 'card number fails the Luhn check'],
      [5, AMEX],
    ]);
  });
});

describe('shop CSV exports', () => {
  it('maps header names to fields, whatever their spelling', () => {
    expect(
      headerColumns([
        'Card Number',
        'EXP',
        'CVV2',
        'Name on card',
        'Address',
        'ZIP',
        'Price (USD)',
        'Base',
        'cc',
        'Order ID',
      ]),
    ).toEqual(['pan', 'expiry', 'cvv', 'name', false, false, 'price', 'base', false, 'extra:Order ID']);
    expect(headerColumns(['cc_number', 'exp_month', 'exp_year', 'first_name', 'last_name', 'bank'])).toEqual([
      'pan',
      'month',
      'year',
      'firstName',
      'lastName',
      'bank',
    ]);
    expect(headerColumns(['CardNumber', 'card-number', 'ACCOUNT_NUMBER'])).toEqual(['pan', false, false]);
    expect(
      headerColumns([
        'account_number',
        'expiring_date',
        'csc',
        'Expiry Month',
        'expiry_year',
        'E-mail',
        'Phone',
        'Track 2',
      ]),
    ).toEqual(['pan', 'expiry', 'cvv', 'month', 'year', false, false, 'track']);
    expect(
      headerColumns([
        'Credit Card No.',
        'Expiration (MM/YY)',
        'Card Verification Value (CVV)',
        'Account Holder',
        'Verification Status',
      ]),
    ).toEqual(['pan', 'expiry', 'cvv', 'name', 'extra:Verification Status']);
    expect(headerColumns(['Exp. Month', 'Exp. Year (YYYY)'])).toEqual(['month', 'year']);
  });

  it('picks the delimiter a line uses', () => {
    expect(delimiterOf('card,exp,cvv')).toBe(',');
    expect(delimiterOf('card|exp|cvv|Smith, John')).toBe('|');
    expect(delimiterOf('card;exp;cvv')).toBe(';');
    expect(delimiterOf('card\texp\tcvv')).toBe('\t');
    expect(delimiterOf('card')).toBe(',');
  });

  it('reads listings as a stream, rejecting bad rows by line', async () => {
    const text = [
      'card number,exp,cvv,first name,last name,address,city,state,zip,country,price,base,shop,level,type,bank',
      `${VISA},03/27,123,John,Smith,1 Main St,Springfield,IL,62701,US,$12.50,BASE_01,acme-shop,PLATINUM,credit,CHASE`,
      `4147200000000004,03/27,123,Jane,Roe,,,,,,,,,,,`,
      `"${AMEX}",11/29,,"Jane ""JJ""",Roe,,,NY,,US,9,BASE_02,,,,`,
    ].join('\n');
    const parsed = await collect(readShopCsv(Readable.from([text]), { input: 'shop.csv', delimiter: ',' }));
    expect(parsed.map((p) => p.line)).toEqual([2, 3, 4]);
    expect(parsed[0]!.record).toEqual({
      pan: VISA,
      expMonth: 3,
      expYear: 2027,
      hasCvv: true,
      holder: 'J. S.',
      billingState: 'IL',
      billingCountry: 'US',
      priceCents: 1250,
      base: 'BASE_01',
      shop: 'acme-shop',
      level: 'PLATINUM',
      extra: null,
      claimed: { brand: null, cardType: 'credit', issuer: 'CHASE' },
    });
    expect(parsed[1]!.record).toBe('card number fails the Luhn check');
    expect(parsed[2]!.record).toMatchObject({
      pan: AMEX,
      hasCvv: false,
      holder: 'J. J. R.',
      billingState: 'NY',
      priceCents: 900,
    });
  });

  it('rejects a malformed row and reads on', async () => {
    const text = `cc;mm;yy;cvv\n${VISA};03;27;123\n${VISA};04;27;"12\n${AMEX};05;28;1234\n`;
    const parsed = await collect(readShopCsv(Readable.from([text]), { input: 'x.csv', delimiter: ';' }));
    expect(parsed.map((p) => [p.line, typeof p.record === 'string' ? p.record : p.record.expMonth])).toEqual([
      [2, 3],
      [4, 'malformed CSV (CSV_QUOTE_NOT_CLOSED)'],
    ]);
  });

  it('refuses a file whose header names no card number; keeps cards without an expiry column, with a warning', async () => {
    await expect(
      collect(readShopCsv(Readable.from([`${VISA},03/27,123\n`]), { input: 'x.csv', delimiter: ',' })),
    ).rejects.toThrow(IngestError);
    const [row] = await collect(
      readShopCsv(Readable.from([`card,cvv\n${VISA},123\n`]), { input: 'x.csv', delimiter: ',' }),
    );
    expect(row).toMatchObject({ record: { pan: VISA, expMonth: null, hasCvv: true }, warnings: ['no expiry'] });
  });

  it('keeps unknown columns as extra fields, but never one holding a card number', async () => {
    const text = `PAN|Exp|Order ID|Note|Phone\n${VISA}|03/27|A-1001|second card ${AMEX}|555-0100\n`;
    const [row] = await collect(readShopCsv(Readable.from([text]), { input: 'x.csv', delimiter: '|' }));
    expect(row).toMatchObject({
      record: { extra: { 'Order ID': 'A-1001' } },
      warnings: ['extra field holding a card number not stored'],
    });
  });

  it('reads a card from a track column when the row has no card-number column', async () => {
    const text = `track2,pin\n;${VISA}=27031010000012300000?,1234\n`;
    const [row] = await collect(readShopCsv(Readable.from([text]), { input: 'x.csv', delimiter: ',' }));
    expect(row).toMatchObject({ record: { pan: VISA, expMonth: 3, expYear: 2027, hasCvv: false } });
  });
});

describe('track data', () => {
  const TRACK1 = `%B${VISA}^SMITH/JOHN A^2703101000000000000000123000000?`;
  const TRACK2 = `;${VISA}=27031010000012300000?`;

  it('reads PAN, holder initials (surname written first) and the YYMM expiry of track 1', () => {
    const [read] = trackCards(TRACK1);
    expect(read).toMatchObject({
      record: {
        pan: VISA,
        holder: 'J. A. S.',
        expMonth: 3,
        expYear: 2027,
        hasCvv: false,
        extra: { tracks: '1', service_code: '101' },
      },
      warnings: [],
    });
  });

  it('makes one card of tracks 1 and 2 on a line, and reads tracks without sentinels or with the chip D separator', () => {
    expect(trackCards(`${TRACK1}${TRACK2}`).map((read) => typeof read !== 'string' && read.record.extra)).toEqual([
      { tracks: '1+2', service_code: '101' },
    ]);
    expect(trackCards(`${AMEX}D29122010000000000`)).toMatchObject([
      { record: { pan: AMEX, expMonth: 12, expYear: 2029 } },
    ]);
    expect(trackCards(`dump: ${VISA}=2703101 | pin 1234`)).toMatchObject([{ record: { pan: VISA, expMonth: 3 } }]);
  });

  it('stores no expiry for a track whose YYMM has no month 1-12, and keeps the card', () => {
    expect(trackCards(`;${VISA}=2713101?`)).toMatchObject([
      { record: { pan: VISA, expMonth: null }, warnings: [UNREADABLE_EXPIRY] },
    ]);
  });

  it('reads a dump line by line; a line without tracks is rejected', async () => {
    const parsed = await collect(readTrackDump(Readable.from([`# dumps\n${TRACK2}\nTrack 1 / Track 2\n`])));
    expect(parsed.map(({ line, record }) => [line, typeof record === 'string' ? record : record.pan])).toEqual([
      [2, VISA],
      [3, 'no track 1 or track 2 data'],
    ]);
  });
});
