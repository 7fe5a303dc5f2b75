import { parse as parseCsv } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel, loadCorpus, message } from '../support/corpus.ts';
import { search } from '../support/messenger-search.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';

/**
 * CSV injection: whatever a message holds, no cell of a CSV export is read as a formula by a
 * spreadsheet, whichever separator its locale splits at and whatever blanks it trims.
 */

const SEPARATORS = [',', ';', '|', '\t', '\r', '\n'];
const SPLIT = /[,;|\t\r\n]/;
/** = + - @ and the characters NFKC folds onto them (full-width, small, super- and subscript), the minus sign, tab, CR. */
const TRIGGERS = [
  '=',
  '+',
  '-',
  '@',
  '＝',
  '＋',
  '－',
  '＠',
  '﹦',
  '﹢',
  '﹣',
  '﹫',
  '⁺',
  '₊',
  '⁼',
  '₌',
  '⁻',
  '₋',
  '\u2212',
  '\t',
  '\r',
];
const BLANKS = ['', ' ', '   ', '\u00a0', '\u3000', '\u2003', '\n', '\r\n', ' \t '];
const PAYLOADS = ['1+1', "cmd|' /C calc'!A0", 'HYPERLINK("http://evil.test")', 'SUM(A1:A2)'];

/** Every trigger behind every blank, at the cell's start and behind every separator. */
function hostileCells(): string[] {
  const cells: string[] = [];
  TRIGGERS.forEach((trigger, i) => {
    const payload = PAYLOADS[i % PAYLOADS.length]!;
    for (const blank of BLANKS) {
      cells.push(`${blank}${trigger}${payload}`);
      for (const separator of SEPARATORS) cells.push(`x${separator}${blank}${trigger}${payload}`);
    }
  });
  return cells;
}

const normalizedTriggers = new Set(TRIGGERS.map((t) => t.normalize('NFKC')));
const startsWithTrigger = (piece: string) => {
  const first = [...piece.trim()][0];
  return (
    first !== undefined && (normalizedTriggers.has(first) || normalizedTriggers.has(first.normalize('NFKC').charAt(0)))
  );
};

describe('CSV export of hostile cells', () => {
  let t: TestApp;
  let token: string;
  const cells = hostileCells();

  beforeAll(async () => {
    t = await createTestApp({ env: { DRAGNET_RATE_LIMITS: 'off' } });
    await t.createUser({ org: 'Acme', email: 'alice@acme.test' });
    token = (await t.login('alice@acme.test')).access;
    // Each cell is a message's text (the marker last, so the cell's own start is the text's) and its file name.
    await loadCorpus(t, [
      channel(
        'hostile',
        cells.map((cell, i) =>
          message(i + 1, `${cell} hostilemark`, { fileName: cell, hasMedia: true, mediaType: 'document' }),
        ),
      ),
    ]);
  });
  afterAll(() => t.close());

  it('quotes every field and leaves no piece of any cell starting with a formula trigger', async () => {
    const found = await search(t, token, { query: 'hostilemark' });
    expect(found.total).toBe(cells.length);
    const url = `/service/messenger-search-history-export/${found.search_history_id}/`;
    const csv = await t.request({ method: 'GET', url: `${url}?format=csv`, token });
    expect(csv.statusCode).toBe(200);
    expect(csv.body.startsWith('\uFEFF"message_id","channel_id",')).toBe(true);

    const rows = parseCsv(csv.body, { bom: true, relax_column_count: false }) as string[][];
    expect(rows.length).toBe(cells.length + 1);
    const hostile = rows
      .slice(1)
      .flat()
      .filter((cell) => cell.split(SPLIT).some(startsWithTrigger));
    expect(hostile).toEqual([]);

    // Nothing but apostrophes was added: the text is the message's, as the JSON export gives it.
    const json = await t.request({ method: 'GET', url: `${url}?format=json`, token });
    const stored = new Map(
      (json.json() as { results: { message_id: number; text: string }[] }).results.map((r) => [
        String(r.message_id),
        r.text,
      ]),
    );
    const header = rows[0]!;
    const [idColumn, textColumn] = [header.indexOf('message_id'), header.indexOf('text')];
    for (const row of rows.slice(1))
      expect(row[textColumn]!.replaceAll("'", '')).toBe(stored.get(row[idColumn]!)!.replaceAll("'", ''));
  });
});
