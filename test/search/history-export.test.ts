import { parse as parseCsv } from 'csv-parse/sync';
import { XMLParser } from 'fast-xml-parser';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel, loadCorpus, message } from '../support/corpus.ts';
import { expectError, fieldsOf } from '../support/http.ts';
import {
  getJson,
  idsOf,
  search,
  type HistoryItemBody,
  type ListBody,
  type SearchResponseBody,
} from '../support/messenger-search.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';

/**
 * Search history (spec 4.2): the list, re-reading a past run, its stability after new messages
 * arrive, exports in the four formats parsed back, and organization isolation.
 */

const HISTORY = '/service/messenger-search-history/';
const resultsUrl = (id: number, query = '') => `/service/messenger-search-history-results/${id}/${query}`;
const exportUrl = (id: number, query = '') => `/service/messenger-search-history-export/${id}/${query}`;

const EXPORT_QUERY = `exportcase OR "a<b&c>'d"`;
const exportTexts = {
  901: '=HYPERLINK("http://evil.test","click") exportcase',
  902: '@SUM(A1:A2) exportcase',
  903: '+1 555 0100 exportcase',
  904: '-2 exportcase minus',
  905: `exportcase <b>bold</b> & "double" 'single'`,
  906: 'exportcase Привет, мир! Данные клиентов',
  907: 'exportcase, with a comma\nand a second line',
  908: 'exportcase from the untitled channel',
} as const;
const exportLinks = ['https://x.test/?a=1&b=<2>', 'http://y.test/"q"'];
/** Newest first: message dates follow message ids. */
const exportOrder = [908, 907, 906, 905, 904, 903, 902, 901];

const corpus = [
  channel(
    'exports',
    [
      message(901, exportTexts[901]),
      message(902, exportTexts[902]),
      message(903, exportTexts[903]),
      message(904, exportTexts[904]),
      message(905, exportTexts[905], {
        userId: 77,
        hasMedia: true,
        mediaType: 'photo',
        fileName: '=evil.xlsx',
        links: exportLinks,
      }),
      message(906, exportTexts[906]),
      message(907, exportTexts[907]),
      message(909, 'bellcase x\u0007y\u001bz end'),
    ],
    { category: 'Leaks' },
  ),
  channel(null, [message(908, exportTexts[908])], { title: 'Безымянный канал' }),
  channel('alpha', [message(911, 'stablecheck one'), message(912, 'stablecheck two'), message(913, 'stablecheck dup')]),
  channel('beta', [message(914, 'stablecheck dup')]),
];

async function pdfText(buffer: Buffer): Promise<string> {
  const document = await getDocument({ data: new Uint8Array(buffer) }).promise;
  const parts: string[] = [];
  for (let number = 1; number <= document.numPages; number++) {
    const content = await (await document.getPage(number)).getTextContent();
    for (const item of content.items) if ('str' in item) parts.push(item.str);
  }
  await document.destroy();
  return parts.join('\n');
}

function without<T extends object, K extends keyof T>(value: T, key: K): Omit<T, K> {
  const copy = { ...value };
  delete copy[key];
  return copy;
}

const xml = new XMLParser({
  parseTagValue: false,
  isArray: (name) => ['message', 'link', 'channel'].includes(name),
});

interface XmlMessage {
  message_id: string;
  channel_id: string;
  channel_username: string;
  user_id: string;
  date: string;
  text: string;
  has_media: string;
  media_type: string;
  file_name: string;
  links: '' | { link: string[] };
  channel_count: string;
  channels_list: '' | { channel: string[] };
}

describe('messenger search history and exports over HTTP', () => {
  let t: TestApp;
  let alice: string;
  let bob: string;
  let aliceOrg: number;
  let exportSearch: SearchResponseBody;

  beforeAll(async () => {
    // Rate limits (spec 8.1) are another suite's subject; the injected requests all share one clock second.
    t = await createTestApp({ env: { DRAGNET_RATE_LIMITS: 'off' } });
    ({ org_id: aliceOrg } = await t.createUser({ org: 'Acme', email: 'alice@acme.test' }));
    await t.createUser({ org: 'Globex', email: 'bob@globex.test' });
    await loadCorpus(t, corpus);
    alice = (await t.login('alice@acme.test')).access;
    bob = (await t.login('bob@globex.test')).access;
    exportSearch = await search(t, alice, { query: EXPORT_QUERY, page_size: 3, context_chars: 10 });
  });
  afterAll(() => t.close());

  const download = (id: number, query = '', token = alice) =>
    t.request({ method: 'GET', url: exportUrl(id, query), token });

  describe('history list', () => {
    it('records a search with its query, parsed query, totals and time', async () => {
      t.clock.set('2026-03-10T10:00:00.000Z');
      const done = await search(t, alice, { query: 'Stablecheck -dup' });
      const list = await getJson<ListBody<HistoryItemBody>>(t, alice, HISTORY);
      expect(list.items[0]).toMatchObject({
        id: done.search_history_id,
        query: 'Stablecheck -dup',
        parsed_query: '("stablecheck" AND NOT "dup")',
        total_matches: 2,
        channels_matched: 1,
        searched_at: '2026-03-10T10:00:00.000Z',
      });
    });

    it('lists newest first, 20 a page by default', async () => {
      const made: number[] = [];
      for (let i = 0; i < 22; i++) {
        t.clock.advance(1000);
        made.push((await search(t, alice, { query: `paging${i} OR stablecheck` })).search_history_id);
      }
      const first = await getJson<ListBody<HistoryItemBody>>(t, alice, HISTORY);
      const total = first.total;
      expect(total).toBeGreaterThanOrEqual(24);
      expect(first).toMatchObject({ page: 1, page_size: 20, total_pages: Math.ceil(total / 20) });
      expect(first.items).toHaveLength(20);
      expect(first.items.map((i) => i.id)).toEqual(made.slice(-20).reverse());
      expect(first.items[0]).toMatchObject({ query: 'paging21 OR stablecheck', total_matches: 4, channels_matched: 2 });
      const searchedAt = first.items.map((i) => Date.parse(i.searched_at));
      expect(searchedAt).toEqual([...searchedAt].sort((a, b) => b - a));

      const second = await getJson<ListBody<HistoryItemBody>>(t, alice, `${HISTORY}?page=2`);
      expect(second).toMatchObject({ page: 2, page_size: 20, total });
      expect(second.items.slice(0, 2).map((i) => i.id)).toEqual([made[1], made[0]]);

      const small = await getJson<ListBody<HistoryItemBody>>(t, alice, `${HISTORY}?page=2&page_size=5`);
      expect(small.items.map((i) => i.id)).toEqual(made.slice(-10, -5).reverse());
      expect(small.total_pages).toBe(Math.ceil(total / 5));

      const beyond = await getJson<ListBody<HistoryItemBody>>(t, alice, `${HISTORY}?page=99`);
      expect(beyond).toMatchObject({ items: [], total, page: 99 });
    });

    it('rejects page 0 and page_size 0', async () => {
      expect(
        fieldsOf(
          expectError(
            await t.request({ method: 'GET', url: `${HISTORY}?page=0`, token: alice }),
            400,
            'validation_failed',
          ),
        ),
      ).toEqual(['page']);
      expect(
        fieldsOf(
          expectError(
            await t.request({ method: 'GET', url: `${HISTORY}?page_size=0`, token: alice }),
            400,
            'validation_failed',
          ),
        ),
      ).toEqual(['page_size']);
    });

    it("shows only the caller's organization", async () => {
      const before = await getJson<ListBody<HistoryItemBody>>(t, bob, HISTORY);
      expect(before).toMatchObject({ items: [], total: 0 });
      const own = await search(t, bob, { query: 'stablecheck' });
      const after = await getJson<ListBody<HistoryItemBody>>(t, bob, HISTORY);
      expect(after.items.map((i) => i.id)).toEqual([own.search_history_id]);
      const aliceIds = (await getJson<ListBody<HistoryItemBody>>(t, alice, `${HISTORY}?page_size=100`)).items.map(
        (i) => i.id,
      );
      expect(aliceIds).not.toContain(own.search_history_id);
    });
  });

  describe('re-reading a past search', () => {
    it('returns the results of the run, paged with page_size 10 by default', async () => {
      const id = exportSearch.search_history_id;
      const firstPage = await getJson<SearchResponseBody>(t, alice, resultsUrl(id, '?page_size=3'));
      // The follow-up token is issued afresh on each read; everything else is the run as it was.
      expect(without(firstPage, 'follow_up_token')).toEqual(without(exportSearch, 'follow_up_token'));

      const byDefault = await getJson<SearchResponseBody>(t, alice, resultsUrl(id));
      expect(byDefault).toMatchObject({ page: 1, page_size: 10, total: 8, total_pages: 1, search_history_id: id });
      expect(idsOf(byDefault)).toEqual(exportOrder);
      // The run's context_chars still shapes the previews.
      expect(byDefault.results.find((r) => r.message_id === 906)!.text_preview).toBe('exportcase…');

      const third = await getJson<SearchResponseBody>(t, alice, resultsUrl(id, '?page=3&page_size=3'));
      expect(idsOf(third)).toEqual([902, 901]);
      const beyond = await getJson<SearchResponseBody>(t, alice, resultsUrl(id, '?page=4&page_size=3'));
      expect(beyond).toMatchObject({ results: [], total: 8, total_pages: 3 });

      const verified = await t.container.followUps.verify(aliceOrg, byDefault.follow_up_token);
      expect(verified).toEqual({ historyId: id, args: { query: EXPORT_QUERY, unique_only: false, context_chars: 10 } });
    });

    it('keeps the same results after new matching messages arrive', async () => {
      const plain = await search(t, alice, { query: 'stablecheck' });
      const unique = await search(t, alice, { query: 'stablecheck', unique_only: true });
      expect(plain).toMatchObject({ total: 4, channels_matched: 2 });
      expect(idsOf(plain)).toEqual([914, 913, 912, 911]);
      expect(unique.total).toBe(3);
      const uniqueDup = unique.results.find((r) => r.channel_count > 1)!;
      expect([...uniqueDup.channels_list!].sort()).toEqual(['alpha', 'beta']);

      await loadCorpus(t, [
        channel('alpha', [
          message(915, 'stablecheck three'),
          message(916, 'stablecheck dup', { date: '2025-01-01T00:00:00Z' }),
        ]),
        channel('gamma', [
          message(917, 'stablecheck dup'),
          message(918, 'stablecheck newest', { date: '2027-01-01T00:00:00Z' }),
        ]),
      ]);

      const plainAgain = await getJson<SearchResponseBody>(t, alice, resultsUrl(plain.search_history_id));
      expect(plainAgain).toMatchObject({ total: 4, channels_matched: 2, total_pages: 1 });
      expect(plainAgain.results).toEqual(plain.results);

      const uniqueAgain = await getJson<SearchResponseBody>(t, alice, resultsUrl(unique.search_history_id));
      expect(uniqueAgain.total).toBe(3);
      expect(uniqueAgain.results).toEqual(unique.results);

      const exported = JSON.parse((await download(plain.search_history_id, '?format=json')).body) as {
        results: { message_id: number }[];
      };
      expect(exported.results.map((r) => r.message_id)).toEqual([914, 913, 912, 911]);

      // A new search sees the new messages.
      const fresh = await search(t, alice, { query: 'stablecheck' });
      expect(fresh).toMatchObject({ total: 8, channels_matched: 3 });
      expect(idsOf(fresh)[0]).toBe(918);
      const freshUnique = await search(t, alice, { query: 'stablecheck', unique_only: true });
      expect(freshUnique.total).toBe(5);
      expect(freshUnique.results.find((r) => r.channel_count > 1)!.channel_count).toBe(3);
    });

    it('an unknown id is 404, a malformed one 400', async () => {
      expectError(await t.request({ method: 'GET', url: resultsUrl(999_999), token: alice }), 404, 'not_found');
      expectError(
        await t.request({ method: 'GET', url: '/service/messenger-search-history-results/abc/', token: alice }),
        400,
        'validation_failed',
      );
      expectError(
        await t.request({ method: 'GET', url: resultsUrl(exportSearch.search_history_id, '?page=0'), token: alice }),
        400,
        'validation_failed',
      );
    });
  });

  describe('exports', () => {
    const id = () => exportSearch.search_history_id;

    it('defaults to CSV', async () => {
      const response = await download(id());
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
      expect(response.headers['content-disposition']).toBe(`attachment; filename="dragnet-search-${id()}.csv"`);
    });

    it.each([
      ['csv', /^text\/csv/],
      ['json', /^application\/json/],
      ['xml', /^application\/xml/],
    ])('%s has its content type and a file name', async (format, type) => {
      const response = await download(id(), `?format=${format}`);
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers['content-type']).toMatch(type);
      expect(response.headers['content-disposition']).toBe(`attachment; filename="dragnet-search-${id()}.${format}"`);
    });

    it('an unknown format is 400 naming format', async () => {
      const error = expectError(await download(id(), '?format=docx'), 400, 'validation_failed');
      expect(fieldsOf(error)).toEqual(['format']);
    });

    it('CSV: every result, newest first, formulas neutralised, text intact', async () => {
      const rows = parseCsv((await download(id(), '?format=csv')).body, { bom: true, columns: true }) as Record<
        string,
        string
      >[];
      expect(Object.keys(rows[0]!)).toEqual(
        expect.arrayContaining([
          'message_id',
          'channel_id',
          'channel_username',
          'user_id',
          'date',
          'text',
          'has_media',
          'media_type',
          'file_name',
          'links',
          'channel_count',
          'channels_list',
        ]),
      );
      // All eight rows although the search itself showed a page of three.
      expect(rows.map((r) => Number(r.message_id))).toEqual(exportOrder);
      const text = (messageId: number) => rows.find((r) => Number(r.message_id) === messageId)!.text;
      expect(text(901)).toBe(`'${exportTexts[901]}`);
      expect(text(902)).toBe(`'${exportTexts[902]}`);
      expect(text(903)).toBe(`'${exportTexts[903]}`);
      expect(text(904)).toBe(`'${exportTexts[904]}`);
      expect(text(905)).toBe(exportTexts[905]);
      expect(text(906)).toBe(exportTexts[906]);
      expect(text(907)).toBe(exportTexts[907]);

      const rich = rows.find((r) => r.message_id === '905')!;
      expect(rich).toMatchObject({
        channel_username: 'exports',
        user_id: '77',
        date: new Date(Date.parse('2026-01-01T00:00:00Z') + 905 * 60_000).toISOString(),
        has_media: 'true',
        media_type: 'photo',
        file_name: "'=evil.xlsx",
        channel_count: '1',
        channels_list: 'exports',
      });
      for (const link of exportLinks) expect(rich.links).toContain(link);
      expect(rows.find((r) => r.message_id === '908')).toMatchObject({
        channel_username: '',
        channels_list: 'Безымянный канал',
      });
    });

    it('JSON: the search and every result with its full text', async () => {
      const body = JSON.parse((await download(id(), '?format=json')).body) as {
        search: Record<string, unknown>;
        results: (Record<string, unknown> & { message_id: number; text: string })[];
      };
      expect(body.search).toMatchObject({
        id: id(),
        query: EXPORT_QUERY,
        parsed_query: exportSearch.query_info.normalized,
        total_matches: 8,
        channels_matched: 2,
        searched_at: '2026-03-10T09:00:00.000Z',
      });
      expect(body.results.map((r) => r.message_id)).toEqual(exportOrder);
      for (const result of body.results)
        expect(result.text).toBe(exportTexts[result.message_id as keyof typeof exportTexts]);
      const reread = await getJson<SearchResponseBody>(t, alice, resultsUrl(id()));
      for (const item of reread.results) {
        expect(body.results.find((r) => r.message_id === item.message_id)).toMatchObject(without(item, 'text_preview'));
      }
    });

    it('XML: parses, and <, & and quotes round-trip', async () => {
      const document = xml.parse((await download(id(), '?format=xml')).body) as {
        search: { query: string; parsed_query: string; total_matches: string; results: { message: XmlMessage[] } };
      };
      expect(document.search.query).toBe(EXPORT_QUERY);
      expect(document.search.parsed_query).toBe(exportSearch.query_info.normalized);
      expect(document.search.total_matches).toBe('8');
      const messages = document.search.results.message;
      expect(messages.map((m) => Number(m.message_id))).toEqual(exportOrder);
      for (const m of messages) expect(m.text).toBe(exportTexts[Number(m.message_id) as keyof typeof exportTexts]);
      const rich = messages.find((m) => m.message_id === '905')!;
      expect(rich).toMatchObject({
        user_id: '77',
        has_media: 'true',
        media_type: 'photo',
        file_name: '=evil.xlsx',
        channel_username: 'exports',
      });
      expect(rich.links).toEqual({ link: exportLinks });
      expect(rich.channels_list).toEqual({ channel: ['exports'] });
      expect(messages.find((m) => m.message_id === '908')!.channels_list).toEqual({ channel: ['Безымянный канал'] });
    });

    it('XML drops the control characters XML 1.0 cannot carry; JSON keeps them', async () => {
      const { search_history_id: bell } = await search(t, alice, { query: 'bellcase' });
      const document = xml.parse((await download(bell, '?format=xml')).body) as {
        search: { results: { message: XmlMessage[] } };
      };
      expect(document.search.results.message.map((m) => m.text)).toEqual(['bellcase xyz end']);
      const json = JSON.parse((await download(bell, '?format=json')).body) as { results: { text: string }[] };
      expect(json.results.map((r) => r.text)).toEqual(['bellcase x\u0007y\u001bz end']);
    });

    it('PDF: a document whose text holds the query and the messages, Cyrillic included', async () => {
      const response = await download(id(), '?format=pdf');
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toBe('application/pdf');
      expect(response.headers['content-disposition']).toBe(`attachment; filename="dragnet-search-${id()}.pdf"`);
      const buffer = response.rawPayload;
      expect(buffer.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      const text = await pdfText(buffer);
      expect(text).toContain(EXPORT_QUERY);
      expect(text).toContain(exportTexts[906]);
      expect(text).toContain(exportTexts[905]);
      expect(text).toContain(exportTexts[901]);
    });

    it("another organization's history is 404 on results and every export", async () => {
      expectError(await t.request({ method: 'GET', url: resultsUrl(id()), token: bob }), 404, 'not_found');
      for (const query of ['', '?format=csv', '?format=json', '?format=xml', '?format=pdf']) {
        expectError(await download(id(), query, bob), 404, 'not_found');
      }
      expectError(await download(999_999, '?format=json'), 404, 'not_found');
    });
  });
});
