import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  binInfo,
  createBinTable,
  DEFAULT_BIN_FILE,
  MAX_RANGE_PREFIXES,
  rangePrefixes,
  readBinRanges,
  type BinEntry,
  type BinRow,
} from './bin-table.ts';

const info = (bank: string) => binInfo({ scheme: 'visa', type: 'credit', country: 'us', bank_name: bank });

const collect = async (rows: AsyncIterable<BinRow>): Promise<BinRow[]> => {
  const all: BinRow[] = [];
  for await (const row of rows) all.push(row);
  return all;
};

describe('the BIN table', () => {
  it('answers the longest prefix it holds', () => {
    const table = createBinTable([
      { prefix: '414720', info: info('SIX') },
      { prefix: '4147201', info: info('SEVEN') },
      { prefix: '41472012', info: info('EIGHT') },
      { prefix: '41472099', info: info('OTHER EIGHT') },
    ]);
    expect(table.size).toBe(4);
    expect(table.lookup('4147201234567890')?.bank).toBe('EIGHT');
    expect(table.lookup('4147201934567890')?.bank).toBe('SEVEN');
    expect(table.lookup('4147209934567890')?.bank).toBe('OTHER EIGHT');
    expect(table.lookup('4147205534567890')?.bank).toBe('SIX');
    expect(table.lookup('414720')?.bank).toBe('SIX');
    expect(table.lookup('4147211234567890')).toBeNull();
    expect(table.lookup('41472')).toBeNull();
  });

  it('keeps the first entry of a prefix given twice', () => {
    const table = createBinTable([
      { prefix: '414720', info: info('FIRST') },
      { prefix: '414720', info: info('SECOND') },
    ]);
    expect(table.size).toBe(1);
    expect(table.lookup('414720123')?.bank).toBe('FIRST');
  });

  it('expands a range to every prefix of the same length between its ends', () => {
    expect(rangePrefixes('371241', '')).toEqual(['371241']);
    expect(rangePrefixes('371241', '371243')).toEqual(['371241', '371242', '371243']);
    expect(rangePrefixes('00000098', '00000101')).toEqual(['00000098', '00000099', '00000100', '00000101']);
    expect(rangePrefixes('37124', '')).toBe('iin_start must be 6 to 8 digits');
    expect(rangePrefixes('371241', '3712429')).toBe('iin_end must be empty or as many digits as iin_start');
    expect(rangePrefixes('371243', '371241')).toBe('iin_end is below iin_start');
    expect(rangePrefixes('40000000', '49999999')).toBe(`the range holds more than ${MAX_RANGE_PREFIXES} prefixes`);
  });

  it('reads prepaid as the card type and normalizes scheme and country', () => {
    expect(binInfo({ scheme: 'Visa', type: 'debit', prepaid: 'y', country: 'dk', bank_name: ' Nordea ' })).toEqual({
      scheme: 'visa',
      cardType: 'prepaid',
      country: 'DK',
      bank: 'Nordea',
    });
    expect(binInfo({ scheme: 'elo', type: '', country: '', bank_name: '' })).toEqual({
      scheme: null,
      cardType: null,
      country: null,
      bank: null,
    });
  });

  it('reads binlist rows with their line numbers and rejects bad ones', async () => {
    const text =
      'iin_start,iin_end,scheme,type,prepaid,country,bank_name\n414720,,visa,credit,,US,CHASE\n371241,371242,amex,credit,,US,AMERICAN EXPRESS\n4147,,visa,,,,\n';
    const rows = await collect(readBinRanges(Readable.from([text]), 'bins.csv'));
    expect(
      rows.map((row) => [
        row.line,
        typeof row.entries === 'string' ? row.entries : row.entries.map((e: BinEntry) => e.prefix),
      ]),
    ).toEqual([
      [2, ['414720']],
      [3, ['371241', '371242']],
      [4, 'iin_start must be 6 to 8 digits'],
    ]);
  });

  it('refuses a file without an iin_start column', async () => {
    await expect(collect(readBinRanges(Readable.from(['bin,bank\n414720,X\n']), 'bins.csv'))).rejects.toThrow(
      /iin_start/,
    );
  });

  it('reads the table the project ships (binlist/data) without a rejection', async () => {
    const entries: BinEntry[] = [];
    for (const row of await collect(readBinRanges(createReadStream(DEFAULT_BIN_FILE), DEFAULT_BIN_FILE))) {
      expect(row.entries, `line ${row.line}`).not.toBeTypeOf('string');
      entries.push(...(row.entries as BinEntry[]));
    }
    const table = createBinTable(entries);
    expect(table.size).toBeGreaterThan(5805);
    expect(table.lookup('4147201234567890')).toEqual({
      scheme: 'visa',
      cardType: 'credit',
      country: 'US',
      bank: 'CHASE',
    });
    expect(table.lookup('371242')).toMatchObject({ scheme: 'amex', bank: 'AMERICAN EXPRESS' });
  });
});
