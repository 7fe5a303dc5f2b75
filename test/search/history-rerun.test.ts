import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel, channelIdsByLabel, loadCorpus, message, minutesAfterEpoch } from '../support/corpus.ts';
import { getJson, search, type SearchResponseBody, type SearchRequestBody } from '../support/messenger-search.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';

/**
 * A search keeps no copy of its matches: a re-read of a history entry (spec 4.2) runs the query
 * again below the message-id watermark of the search. Whatever arrives afterwards (matches dated
 * before, between and after the recorded ones, copies of recorded texts, a new channel), every
 * page, read in any order, and the export are exactly what they were.
 */

const resultsUrl = (id: number, page: number, pageSize: number) =>
  `/service/messenger-search-history-results/${id}/?page=${page}&page_size=${pageSize}`;
const PAGE_SIZE = 3;

/** Dates out of id order: a later message id is not a later date. */
const firstCorpus = [
  channel('north', [
    message(1, 'ledger north one', { date: minutesAfterEpoch(50) }),
    message(2, 'Ledger draft north', { date: minutesAfterEpoch(10) }),
    message(3, 'shared ledger text', { date: minutesAfterEpoch(30) }),
    message(4, 'ledgers plural lx', { date: minutesAfterEpoch(70) }),
    message(5, 'unrelated north', { date: minutesAfterEpoch(5) }),
  ]),
  channel('south', [
    message(1, 'shared ledger text', { date: minutesAfterEpoch(40) }),
    message(2, 'LEDGER south caps', { date: minutesAfterEpoch(40) }),
    message(3, 'lx only', { date: minutesAfterEpoch(60) }),
    message(4, 'ledger-x south', { date: minutesAfterEpoch(20) }),
  ]),
  channel('east', [
    message(1, 'ledger east draft', { date: minutesAfterEpoch(65) }),
    message(2, 'shared ledger text', { date: minutesAfterEpoch(15) }),
  ]),
];

/** Everything here matches the queries too. */
const laterCorpus = [
  channel('north', [
    message(6, 'ledger north older', { date: minutesAfterEpoch(1) }),
    message(7, 'ledger north between', { date: minutesAfterEpoch(35) }),
    message(8, 'ledger north newest', { date: minutesAfterEpoch(500) }),
    message(9, 'shared ledger text', { date: minutesAfterEpoch(40) }),
  ]),
  channel('south', [
    message(5, 'lx later', { date: minutesAfterEpoch(45) }),
    message(6, 'ledger south same date', { date: minutesAfterEpoch(40) }),
  ]),
  channel('west', [
    message(1, 'shared ledger text', { date: minutesAfterEpoch(300) }),
    message(2, 'ledger west', { date: minutesAfterEpoch(2) }),
  ]),
];

type Page = Omit<SearchResponseBody, 'follow_up_token'>;
const withoutToken = ({ follow_up_token: _token, ...rest }: SearchResponseBody): Page => rest;

describe('re-reading a search after new messages arrive', () => {
  let t: TestApp;
  let token: string;
  const recorded: {
    body: SearchRequestBody;
    first: SearchResponseBody;
    pages: Page[];
    /** Each page asked of a new search of its own (page > 1), without its history id. */
    asked: Page[];
    exported: string;
  }[] = [];
  const withoutHistoryId = (page: Page): Page => ({ ...page, search_history_id: 0 });

  const readPages = async (id: number, pages: number[]) => {
    const read = new Map<number, Page>();
    for (const page of pages)
      read.set(page, withoutToken(await getJson<SearchResponseBody>(t, token, resultsUrl(id, page, PAGE_SIZE))));
    return [...read.entries()].sort(([a], [b]) => a - b).map(([, body]) => body);
  };
  const exportJson = async (id: number) => {
    const response = await t.request({
      method: 'GET',
      url: `/service/messenger-search-history-export/${id}/?format=json`,
      token,
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.body;
  };

  beforeAll(async () => {
    t = await createTestApp({ env: { DRAGNET_RATE_LIMITS: 'off' } });
    await t.createUser({ org: 'Acme', email: 'analyst@acme.test' });
    token = (await t.login('analyst@acme.test')).access;
    await loadCorpus(t, firstCorpus);
    const ids = await channelIdsByLabel(t, token);
    const bodies: SearchRequestBody[] = [
      { query: 'ledger' },
      { query: 'ledger -draft' },
      { query: 'ledger', channel_ids: [ids.north!, ids.east!] },
      { query: 'ledger', unique_only: true },
      { query: 'lx OR "ledger text"' },
    ];
    for (const body of bodies) {
      const first = await search(t, token, { ...body, page_size: PAGE_SIZE });
      const pageNumbers = Array.from({ length: first.total_pages + 1 }, (_, i) => i + 1);
      const asked: Page[] = [];
      for (const page of pageNumbers)
        asked.push(withoutHistoryId(withoutToken(await search(t, token, { ...body, page, page_size: PAGE_SIZE }))));
      recorded.push({
        body,
        first,
        pages: await readPages(first.search_history_id, pageNumbers),
        asked,
        exported: await exportJson(first.search_history_id),
      });
    }
    await loadCorpus(t, laterCorpus);
  });
  afterAll(() => t.close());

  it('the recorded searches found what the corpus holds', () => {
    expect(recorded.map((r) => [r.body.query, r.first.total, r.first.channels_matched])).toEqual([
      ['ledger', 9, 3],
      ['ledger -draft', 7, 3],
      ['ledger', 6, 2],
      ['ledger', 7, 3],
      ['lx OR "ledger text"', 5, 3],
    ]);
    // The unique search lists the shared text once, naming the three channels it was in.
    const shared = recorded[3]!.pages.flatMap((p) => p.results).find((r) => r.text_preview === 'shared ledger text')!;
    expect([...shared.channels_list!].sort()).toEqual(['east', 'north', 'south']);
  });

  it('every page, read forwards, is what it was', async () => {
    for (const { first, pages } of recorded) {
      const numbers = pages.map((p) => p.page);
      expect(await readPages(first.search_history_id, numbers)).toEqual(pages);
      expect(withoutToken(first)).toEqual(pages[0]);
    }
  });

  it("a new search asked for any page answers it as a re-read of the first search's entry does", () => {
    for (const { pages, asked } of recorded) expect(asked).toEqual(pages.map(withoutHistoryId));
  });

  it('every page, read backwards and out of order, is what it was', async () => {
    for (const { first, pages } of recorded) {
      const numbers = pages.map((p) => p.page);
      expect(await readPages(first.search_history_id, [...numbers].reverse())).toEqual(pages);
      const shuffled =
        numbers.length > 2
          ? [numbers[1]!, numbers[numbers.length - 1]!, numbers[0]!, ...numbers.slice(2, -1)]
          : numbers;
      expect(await readPages(first.search_history_id, shuffled)).toEqual(pages);
    }
  });

  it('pages of another size partition the same results', async () => {
    for (const { first, pages } of recorded) {
      const all = pages.flatMap((p) => p.results);
      const bySeven = await getJson<SearchResponseBody>(t, token, resultsUrl(first.search_history_id, 1, 7));
      expect(bySeven.results).toEqual(all.slice(0, 7));
    }
  });

  it('the export is what it was', async () => {
    for (const { first, exported } of recorded) expect(await exportJson(first.search_history_id)).toBe(exported);
  });

  it('a new search sees the new messages', async () => {
    const now = await search(t, token, { query: 'ledger' });
    expect(now).toMatchObject({ total: 16, channels_matched: 4 });
    expect(now.results[0]!.text_preview).toBe('ledger north newest');
    const unique = await search(t, token, { query: 'ledger', unique_only: true });
    expect(unique.total).toBe(12);
    expect(unique.results.find((r) => r.text_preview === 'shared ledger text')!.channel_count).toBe(4);
  });
});
