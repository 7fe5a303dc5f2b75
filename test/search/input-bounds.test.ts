import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel, loadCorpus, message } from '../support/corpus.ts';
import { search, SEARCH_PATH } from '../support/messenger-search.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';

/**
 * Out-of-range numbers and characters a database column cannot hold are bad input: the answer is
 * a 4xx (or an empty 2xx page), never a 500 (CONVENTIONS, errors: "Never a 500 for bad input").
 * The limits are those of the engines: PostgreSQL bigint/integer, SQLite integer offsets, and
 * PostgreSQL text, which cannot contain NUL.
 */

const HUGE = '100000000000000000000'; // 1e20: a JSON/JS integer beyond every SQL integer type

describe('messenger search rejects out-of-range input without a 5xx', () => {
  let t: TestApp;
  let token: string;
  let historyId: number;

  beforeAll(async () => {
    t = await createTestApp({ env: { DRAGNET_RATE_LIMITS: 'off' } });
    await t.createUser({ org: 'Acme', email: 'analyst@acme.test' });
    await loadCorpus(t, [channel('alpha', [message(1, 'apple pie'), message(2, 'apple tart')], { category: 'Food' })]);
    token = (await t.login('analyst@acme.test')).access;
    historyId = (await search(t, token, { query: 'apple' })).search_history_id;
  });
  afterAll(() => t.close());

  /** A 400 or 404, or an empty 200 page: anything but a server error. */
  async function expectClientOutcome(method: 'GET' | 'POST', url: string, body?: unknown) {
    const response = await t.request({ method, url, token, body });
    expect(
      [200, 400, 404],
      `${method} ${url} ${JSON.stringify(body) ?? ''}: ${response.statusCode} ${response.body}`,
    ).toContain(response.statusCode);
    if (response.statusCode === 200) {
      const page = response.json() as { results?: unknown[]; items?: unknown[] };
      expect(page.results ?? page.items).toEqual([]);
    }
  }

  it.each([
    [`/service/messenger-search-history-results/${HUGE}/`],
    ['/service/messenger-search-history-results/9223372036854775808/'],
    [`/service/messenger-search-history-export/${HUGE}/?format=json`],
  ])('history id out of range: GET %s', async (url) => {
    await expectClientOutcome('GET', url);
  });

  it.each([
    [`/service/messenger-search-history/?page=${HUGE}`],
    [`/service/messenger-channels/?page=${HUGE}`],
    [`/service/messenger-channels-categories/?page=${HUGE}`],
    [`/service/messenger-channels/?category_id=${HUGE}`],
  ])('page or id out of range: GET %s', async (url) => {
    await expectClientOutcome('GET', url);
  });

  it('a page far beyond the 32-bit rank range: history results', async () => {
    await expectClientOutcome(
      'GET',
      `/service/messenger-search-history-results/${historyId}/?page=214748365&page_size=10`,
    );
  });

  it.each([
    [{ query: 'apple', page: 214_748_365 }],
    [{ query: 'apple', page: 1e20 }],
    [{ query: 'apple', channel_ids: [1e20] }],
  ])('search body %j', async (body) => {
    await expectClientOutcome('POST', SEARCH_PATH, body);
  });

  it.each([['a\u0000'], ['\u0000\u0000\u0000'], ['apple "\u0000"']])(
    'a NUL character in the query %j',
    async (query) => {
      await expectClientOutcome('POST', SEARCH_PATH, { query });
    },
  );

  it('a NUL character in the channel search', async () => {
    await expectClientOutcome('GET', '/service/messenger-channels/?search=a%00b');
  });
});
