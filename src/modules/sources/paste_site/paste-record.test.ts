import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orReason, type DocumentRecord } from '../common/documents/document-ingest.ts';
import { pastebinList } from './paste-formats.ts';
import { genericPasteDocument, pastebinDocument, pastebinEntry } from './paste-record.ts';

const paste = (overrides: Record<string, unknown> = {}) => ({
  site: 'Pastebin',
  key: 'Xq7mTz2K',
  title: 'acme-bank.com employees',
  syntax: 'Text',
  user: 'anon1337',
  date: '2026-03-09T10:00:00Z',
  expire: 0,
  url: 'https://pastebin.com/Xq7mTz2K',
  content: 'j.doe@acme-bank.com password: Spring2026!',
  ...overrides,
});
const reasonOf = (value: unknown) => orReason(() => genericPasteDocument(value));

describe('paste records', () => {
  it('a generic paste is found by its title and content; site and syntax are lower-case; size is the content bytes unless given', () => {
    expect(genericPasteDocument(paste())).toEqual({
      key: 'pastebin:Xq7mTz2K',
      text: 'acme-bank.com employees\nj.doe@acme-bank.com password: Spring2026!',
      fields: {
        paste_key: 'Xq7mTz2K',
        site: 'pastebin',
        title: 'acme-bank.com employees',
        syntax: 'text',
        user: 'anon1337',
        size: 41,
        url: 'https://pastebin.com/Xq7mTz2K',
        expire: null,
        posted_at: '2026-03-09T10:00:00.000Z',
      },
    });
    expect(
      genericPasteDocument(
        paste({ title: '', syntax: null, user: '', size: '2048', expire: '2026-04-09T10:00:00Z', date: 1773050400 }),
      ),
    ).toMatchObject({
      text: 'j.doe@acme-bank.com password: Spring2026!',
      fields: {
        title: null,
        syntax: 'text',
        user: null,
        size: 2048,
        expire: '2026-04-09T10:00:00.000Z',
        posted_at: '2026-03-09T10:00:00.000Z',
      },
    });
  });

  it('rejects a paste with the field at fault', () => {
    expect(reasonOf(paste({ site: 'paste bin' }))).toBe('site must be a name such as pastebin or paste_ee');
    expect(reasonOf(paste({ content: '' }))).toBe('content is required');
    expect(reasonOf(paste({ key: null }))).toBe('key is required');
    expect(reasonOf(paste({ size: -1 }))).toBe('size must be a number of bytes');
    expect(reasonOf(paste({ expire: 'never' }))).toBe('expire must be an ISO 8601 date, epoch seconds, or 0 for never');
    expect(reasonOf(paste({ url: 'ftp://pastebin.com/x' }))).toBe('url must be an http(s) URL');
  });

  it('a scraping-list entry: every value a string, expire "0" never, an empty user none, the key safe as a file name', () => {
    const entry = pastebinEntry({
      scrape_url: 'https://scrape.pastebin.com/api_scrape_item.php?i=8sUIsf34',
      full_url: 'https://pastebin.com/8sUIsf34',
      date: '1442911665',
      key: '8sUIsf34',
      size: '250',
      expire: '0',
      title: '',
      syntax: 'php',
      user: '',
    });
    expect(entry.dateSeconds).toBe(1442911665);
    expect(pastebinDocument(entry, '<?php echo 1;')).toEqual({
      key: 'pastebin:8sUIsf34',
      text: '<?php echo 1;',
      fields: {
        paste_key: '8sUIsf34',
        site: 'pastebin',
        title: null,
        syntax: 'php',
        user: null,
        size: 250,
        url: 'https://pastebin.com/8sUIsf34',
        expire: null,
        posted_at: '2015-09-22T08:47:45.000Z',
      },
    });
    expect(orReason(() => pastebinEntry({ key: '../../etc/passwd', date: '1442911665' }))).toBe(
      'key must be letters, digits, - or _',
    );
    expect(orReason(() => pastebinEntry({ key: 'abc', date: 'today' }))).toBe(
      'date must be an ISO 8601 date or epoch seconds',
    );
  });

  describe('--format pastebin: a saved list with each paste in a content field or in <key>.txt beside it', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(path.join(tmpdir(), 'dragnet-pastebin-'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const read = async (input: string) => {
      const records: DocumentRecord[] = [];
      for await (const record of pastebinList.read(input)) records.push(record);
      return records.map(({ location, record }) => [location, typeof record === 'string' ? record : record.text]);
    };

    it('reads the content field first, then <key>.txt; an entry with neither is rejected', async () => {
      const entry = (key: string, extra: Record<string, unknown> = {}) => ({
        scrape_url: '',
        full_url: `https://pastebin.com/${key}`,
        date: '1773050400',
        key,
        size: '5',
        expire: '0',
        title: '',
        syntax: 'text',
        user: '',
        ...extra,
      });
      writeFileSync(path.join(dir, 'bbbbbbbb.txt'), 'from the file');
      writeFileSync(
        path.join(dir, 'list.json'),
        JSON.stringify([
          entry('aaaaaaaa', { content: 'inline' }),
          entry('bbbbbbbb'),
          entry('cccccccc'),
          entry('dddddddd', { content: 7 }),
        ]),
      );
      expect(await read(path.join(dir, 'list.json'))).toEqual([
        ['record 1', 'inline'],
        ['record 2', 'from the file'],
        ['record 3', 'no content: neither a content field nor cccccccc.txt beside the list'],
        ['record 4', 'content must be a string'],
      ]);
      expect(pastebinList.accepts(path.join(dir, 'bbbbbbbb.txt'))).toBe(false);
    });

    it('a list that is not an array fails as a whole', async () => {
      writeFileSync(path.join(dir, 'denied.json'), JSON.stringify({ error: 'YOUR IP DOES NOT HAVE ACCESS' }));
      await expect(read(path.join(dir, 'denied.json'))).rejects.toThrow(
        'top level: not a Pastebin scraping list: not a JSON array',
      );
    });
  });
});

// Our own scraping-API list (today's scrape.pastebin.com host, an empty title and user) always;
// the example response of Pastebin's documentation (../shared/fixtures/SOURCES.md, the older
// pastebin.com host) as well where it is, read in place.
const sharedList = path.resolve(
  import.meta.dirname,
  '../../../../..',
  'shared',
  'fixtures',
  'pastebin',
  'api_scraping.doc-example.json',
);
const scrapingLists = [
  {
    name: 'test/fixtures/paste_site/pastebin-api-scraping.json',
    file: path.resolve(import.meta.dirname, '../../../../test/fixtures/paste_site/pastebin-api-scraping.json'),
    fields: [
      {
        paste_key: 'Wq7tLm2R',
        site: 'pastebin',
        title: 'initech vpn configs',
        syntax: 'text',
        user: 'n0ctua',
        size: 4127,
        url: 'https://pastebin.com/Wq7tLm2R',
        expire: '2025-11-09T14:05:10.000Z',
        posted_at: '2025-11-02T14:05:10.000Z',
      },
      {
        paste_key: 'c3Pz9KfA',
        site: 'pastebin',
        title: null,
        syntax: 'python',
        user: null,
        size: 86,
        url: 'https://pastebin.com/c3Pz9KfA',
        expire: null,
        posted_at: '2025-11-02T14:04:15.000Z',
      },
    ],
  },
  ...(existsSync(sharedList)
    ? [
        {
          name: 'the documented example (../shared/fixtures/pastebin)',
          file: sharedList,
          fields: [
            {
              paste_key: '0CeaNm8Y',
              site: 'pastebin',
              title: 'Once we all know when we goto function',
              syntax: 'java',
              user: 'admin',
              size: 890,
              url: 'https://pastebin.com/0CeaNm8Y',
              expire: '2015-09-23T08:49:19.000Z',
              posted_at: '2015-09-22T08:50:02.000Z',
            },
            {
              paste_key: '8sUIsf34',
              site: 'pastebin',
              title: 'master / development delete restriction',
              syntax: 'php',
              user: null,
              size: 250,
              url: 'https://pastebin.com/8sUIsf34',
              expire: null,
              posted_at: '2015-09-22T08:47:45.000Z',
            },
          ],
        },
      ]
    : []),
];

describe.each(scrapingLists)('the api_scraping.php list $name', ({ file, fields }) => {
  it('every entry reads; dates, sizes and expiries become numbers and ISO dates, "0" never expires', () => {
    const entries = (JSON.parse(readFileSync(file, 'utf8')) as unknown[]).map(pastebinEntry);
    expect(entries.map((entry) => pastebinDocument(entry, 'x').fields)).toEqual(fields);
  });
});
