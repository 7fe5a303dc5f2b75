import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { IngestError } from '../../ingest/ingest-kit.ts';
import { combinedExpiry, holderInitials, priceCents, splitExpiry, type CardRecord } from '../card-record.ts';
import { parsePipeLine, readPipeDump } from './pipe-dump.ts';
import { delimiterOf, headerColumns, readShopCsv } from './shop-csv.ts';

// Luhn-valid test numbers (the schemes' published test cards and synthetic ones).
const VISA = '4147200000000002';
const AMEX = '378282246310005';

const card = (value: CardRecord | string | null): CardRecord => {
  if (value === null || typeof value === 'string') throw new Error(`expected a card, got ${String(value)}`);
  return value;
};

const collect = async <T>(items: AsyncIterable<T>): Promise<T[]> => {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
};

describe('expiry, price and holder fields', () => {
  it('reads an expiry in one field', () => {
    expect(combinedExpiry('03/27')).toEqual({ month: 3, year: 2027 });
    expect(combinedExpiry('3/2027')).toEqual({ month: 3, year: 2027 });
    expect(combinedExpiry('11-28')).toEqual({ month: 11, year: 2028 });
    expect(combinedExpiry('0329')).toEqual({ month: 3, year: 2029 });
    expect(combinedExpiry('2030-07')).toEqual({ month: 7, year: 2030 });
    for (const bad of ['13/27', '00/27', '03/1999', '3', '0327x', '']) expect(combinedExpiry(bad), bad).toBeNull();
  });

  it('reads a month and a year apart', () => {
    expect(splitExpiry('3', '27')).toEqual({ month: 3, year: 2027 });
    expect(splitExpiry('12', '2031')).toEqual({ month: 12, year: 2031 });
    expect(splitExpiry('13', '27')).toBeNull();
    expect(splitExpiry('03', '202')).toBeNull();
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
    const record = card(parsePipeLine(`${VISA}|03|27|123|John Smith|1 Main St|Springfield|IL|62701|US|5550100|j@example.test`));
    expect(record).toMatchObject({ pan: VISA, expMonth: 3, expYear: 2027, hasCvv: true, holder: 'J. S.', billingState: null, billingCountry: null });
    expect(JSON.stringify(record)).not.toContain('123');
    expect(JSON.stringify(record)).not.toContain('Main');
  });

  it('reads PAN|MM/YY|CVV|…, four-digit years and grouped numbers', () => {
    expect(card(parsePipeLine(`${VISA}|03/2027|1234|Jane Roe`))).toMatchObject({ expMonth: 3, expYear: 2027, hasCvv: true, holder: 'J. R.' });
    expect(card(parsePipeLine(`3782 822463 10005 | 11 | 2029 | 4321`))).toMatchObject({ pan: AMEX, expMonth: 11, expYear: 2029, hasCvv: true, holder: null });
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

  it('says why a line is not a card, without quoting the number or the CVV', () => {
    const cases: [string, string][] = [
      [`4147200000000004|03|27|123`, 'card number fails the Luhn check'],
      [`41472000|03|27|123`, 'card number must be 12 to 19 digits'],
      [`${VISA}|13|27|123`, 'expiry must be a month 1-12 and a year (YY or YYYY)'],
      [`${VISA}|03`, 'expiry must be a month 1-12 and a year (YY or YYYY)'],
      [`${VISA}|03|27|12`, 'CVV must be 3 or 4 digits'],
      [VISA, 'expected PAN|MM|YY|CVV|name|… or PAN|MM/YY|CVV|name|…'],
    ];
    for (const [line, reason] of cases) {
      expect(parsePipeLine(line), line).toBe(reason);
      expect(reason).not.toMatch(/\d{6}/);
    }
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
    expect(headerColumns(['Card Number', 'EXP', 'CVV2', 'Name on card', 'Address', 'ZIP', 'Price (USD)', 'Base', 'cc'])).toEqual([
      'pan',
      'expiry',
      'cvv',
      'name',
      false,
      false,
      'price',
      'base',
      false,
    ]);
    expect(headerColumns(['cc_number', 'exp_month', 'exp_year', 'first_name', 'last_name', 'bank'])).toEqual(['pan', 'month', 'year', 'firstName', 'lastName', 'bank']);
  });

  it('picks the delimiter the header row uses', () => {
    expect(delimiterOf('card,exp,cvv')).toBe(',');
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
      claimed: { brand: null, cardType: 'credit', issuer: 'CHASE' },
    });
    expect(parsed[1]!.record).toBe('card number fails the Luhn check');
    expect(parsed[2]!.record).toMatchObject({ pan: AMEX, hasCvv: false, holder: 'J. J. R.', billingState: 'NY', priceCents: 900 });
  });

  it('rejects a malformed row and reads on', async () => {
    const text = `cc;mm;yy;cvv\n${VISA};03;27;123\n${VISA};04;27;"12\n${AMEX};05;28;1234\n`;
    const parsed = await collect(readShopCsv(Readable.from([text]), { input: 'x.csv', delimiter: ';' }));
    expect(parsed.map((p) => [p.line, typeof p.record === 'string' ? p.record : p.record.expMonth])).toEqual([
      [2, 3],
      [4, 'malformed CSV (CSV_QUOTE_NOT_CLOSED)'],
    ]);
  });

  it('refuses a file whose header names no card number or no expiry', async () => {
    await expect(collect(readShopCsv(Readable.from([`${VISA},03/27,123\n`]), { input: 'x.csv', delimiter: ',' }))).rejects.toThrow(IngestError);
    await expect(collect(readShopCsv(Readable.from(['card,cvv\n']), { input: 'x.csv', delimiter: ',' }))).rejects.toThrow(/no expiry column/);
  });
});
