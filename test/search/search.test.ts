import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel, channelIdsByLabel, loadCorpus, message } from '../support/corpus.ts';
import { expectError, fieldsOf, type ErrorBody } from '../support/http.ts';
import { allIds, idsOf, postSearch, search, type SearchRequestBody } from '../support/messenger-search.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';

/**
 * POST /service/messenger-search-create/ end to end (spec 2.2, 2.3, 4.2): every request field,
 * every response field, the query language, previews, deduplication, paging, warnings, errors.
 * Message ids are unique across the corpus, so a result set is named by its message ids.
 */

const ELLIPSIS = '…';

// Messages whose exact fields are asserted.
const fullMessage = message(701, 'FieldCheck: full record of the dump', {
  userId: 12345,
  date: '2026-02-03T04:05:06.789Z',
  hasMedia: true,
  mediaType: 'document',
  fileName: 'dump.sql',
  links: ['https://example.test/a?x=1&y=2', 'http://files.test/dump.sql'],
});
const bareMessage = message(702, 'fieldcheck without extras', { userId: null, date: '2026-02-01T00:00:00Z' });

// Ten messages whose dates are not in id order: the newest-first and paging fixture.
const orderDates: Record<number, string> = {
  801: '2026-02-10T10:00:00Z',
  802: '2025-12-31T23:59:59Z',
  803: '2026-03-01T00:00:00Z',
  804: '2026-02-10T10:00:01Z',
  805: '2024-06-01T12:00:00Z',
  806: '2026-01-15T08:30:00Z',
  807: '2026-03-09T23:00:00Z',
  808: '2025-07-04T00:00:00Z',
  809: '2026-02-28T12:00:00Z',
  810: '2026-01-01T00:00:00.001Z',
};
const order = (id: number) => message(id, `ordertest item ${id}`, { date: orderDates[id] });
const newestFirst = Object.entries(orderDates)
  .sort(([, a], [, b]) => Date.parse(b) - Date.parse(a))
  .map(([id]) => Number(id));

const longMiddle = `${'a'.repeat(700)}MIDWORD${'b'.repeat(700)}`;

const corpus = [
  channel(
    'fruit',
    [
      message(101, 'apple banana'),
      message(102, 'apple cherry'),
      message(103, 'banana cherry'),
      message(104, 'apple banana cherry'),
      message(105, 'durian only'),
      message(106, 'cherry durian apple'),
      message(107, 'apple or durian, who knows'),
    ],
    { title: 'Fruit market', category: 'Food' },
  ),
  channel(
    'words',
    [
      message(201, 'the quick brown fox'),
      message(202, 'brown quick fox'),
      message(307, 'discount 100% guaranteed'),
      message(308, 'discount 1000 guaranteed'),
      message(309, 'user_name leaked'),
      message(310, 'userXname leaked'),
      message(401, 'id 42 leak'),
      message(402, 'x9 token'),
      message(311, 'send e-mail now'),
      // GLOB's metacharacters (SQLite's exact check) are text, each beside a text the wildcard would match.
      message(312, 'price*2 deal'),
      message(313, 'price22 deal'),
      message(314, 'what? now'),
      message(315, 'whatx now'),
      message(316, '[draft] notes'),
      message(317, 'd draft] notes'),
      // Every trigram of "qzwxyv" occurs in 901 and 903, but only 902 holds the whole term.
      message(901, 'qzw wxy xyv'),
      message(902, 'the qzwxyv key'),
      message(903, 'aqzwx zwxyvq'),
      order(801),
      order(802),
      order(803),
    ],
    { title: 'Words' },
  ),
  channel(
    'intl',
    [
      message(301, 'Продаю БАЗУ клиентов Сбербанка'),
      message(302, 'بيع بيانات البطاقات الائتمانية'),
      message(303, 'ΟΔΟΣΗΜΑΝΣΗ ΑΘΗΝΑ'),
    ],
    { title: 'Международный' },
  ),
  channel('acme', [
    message(304, 'Dump from ACME.COM: login.acme.com admin panel'),
    message(305, 'contact user@acme.com for access'),
    message(306, 'acmeXcom should not match'),
  ]),
  channel('preview', [
    message(501, `${'x'.repeat(50)}NEEDLE${'y'.repeat(50)}`),
    message(502, `PREFIXMATCH${'z'.repeat(40)}`),
    message(503, `${'w'.repeat(40)}TAILMATCH`),
    message(504, `${'😀'.repeat(20)}EMOJIPIN${'😀'.repeat(20)}`),
    message(505, `${'p'.repeat(30)}earlyterm${'p'.repeat(30)}laterterm${'p'.repeat(30)}`),
    message(506, longMiddle),
    message(507, 'short midword text'),
  ]),
  channel('alpha', [
    message(601, 'Fresh combo list DUPTEXT available'),
    message(604, 'DUPTEXT different message'),
    fullMessage,
    order(804),
    order(805),
    order(806),
  ]),
  channel('beta', [message(602, 'Fresh combo list DUPTEXT available'), order(807), order(808)]),
  channel(null, [message(603, 'Fresh combo list DUPTEXT available'), bareMessage, order(809), order(810)], {
    title: 'Gamma Group',
  }),
];

describe('messenger search over HTTP', () => {
  let t: TestApp;
  let token: string;
  let orgId: number;
  let otherOrgId: number;
  let ids: Record<string, number>;

  beforeAll(async () => {
    // Rate limits (spec 8.1: 100 searches a day) are another suite's subject; this one searches far more.
    t = await createTestApp({ env: { DRAGNET_RATE_LIMITS: 'off' } });
    ({ org_id: orgId } = await t.createUser({ org: 'Acme', email: 'analyst@acme.test' }));
    ({ org_id: otherOrgId } = await t.createUser({ org: 'Other', email: 'analyst@other.test' }));
    await loadCorpus(t, corpus);
    token = (await t.login('analyst@acme.test')).access;
    ids = await channelIdsByLabel(t, token);
  });
  afterAll(() => t.close());

  const find = (body: SearchRequestBody) => search(t, token, body);
  /** The sorted ids of every match: for set semantics, where order is tested elsewhere. */
  const matchSet = async (query: string, extra: Omit<SearchRequestBody, 'query'> = {}) =>
    (await allIds(t, token, { query, ...extra })).sort((a, b) => a - b);
  const rejected = async (body: unknown, field: string): Promise<ErrorBody> => {
    const error = expectError(await postSearch(t, token, body), 400, 'validation_failed');
    expect(fieldsOf(error)[0]).toBe(field);
    return error;
  };

  /** Where a query syntax error points: a top-level `position`, or one on the query field. */
  const positionOf = (error: ErrorBody): unknown =>
    error.position ?? (error.fields?.[0] as { position?: number } | undefined)?.position;

  describe('response fields', () => {
    it('returns every message field, with nulls where the message has nothing', async () => {
      const body = await find({ query: 'fieldcheck' });
      expect(body.results).toEqual([
        {
          message_id: 701,
          channel_id: ids.alpha,
          channel_username: 'alpha',
          user_id: 12345,
          text_preview: 'FieldCheck: full record of the dump',
          date: '2026-02-03T04:05:06.789Z',
          has_media: true,
          media_type: 'document',
          file_name: 'dump.sql',
          links: ['https://example.test/a?x=1&y=2', 'http://files.test/dump.sql'],
          forwarded_from: null,
          forwarded_from_id: null,
          via_bot: null,
          reply_to_message_id: null,
          edited_at: null,
          channel_count: 1,
          channels_list: ['alpha'],
        },
        {
          message_id: 702,
          channel_id: ids['Gamma Group'],
          channel_username: null,
          user_id: null,
          text_preview: 'fieldcheck without extras',
          date: '2026-02-01T00:00:00.000Z',
          has_media: false,
          media_type: null,
          file_name: null,
          links: null,
          forwarded_from: null,
          forwarded_from_id: null,
          via_bot: null,
          reply_to_message_id: null,
          edited_at: null,
          channel_count: 1,
          channels_list: ['Gamma Group'],
        },
      ]);
    });

    it('returns the paging state, query_info, history id, warning and follow-up token', async () => {
      const body = await find({ query: '  apple OR banana cherry ' });
      expect(body).toMatchObject({
        total: 6,
        channels_matched: 1,
        page: 1,
        page_size: 10,
        total_pages: 1,
        warning: null,
      });
      expect(body.results).toHaveLength(6);
      expect(body.query_info).toEqual({
        query: 'apple OR banana cherry',
        parsed: {
          type: 'or',
          children: [
            { type: 'term', value: 'apple', phrase: false, position: 2 },
            {
              type: 'and',
              children: [
                { type: 'term', value: 'banana', phrase: false, position: 11 },
                { type: 'term', value: 'cherry', phrase: false, position: 18 },
              ],
            },
          ],
        },
        normalized: '("apple" OR ("banana" AND "cherry"))',
        terms: ['apple', 'banana', 'cherry'],
        truncated: false,
      });
      expect(Number.isInteger(body.search_history_id) && body.search_history_id > 0).toBe(true);
      expect(typeof body.follow_up_token).toBe('string');
      expect(body.follow_up_token.length).toBeGreaterThan(20);
    });

    it('query_info marks phrases, folds terms and keeps each distinct term once', async () => {
      const { query_info } = await find({ query: '"Quick Brown" QUICK -fox' });
      expect(query_info.parsed).toEqual({
        type: 'and',
        children: [
          { type: 'term', value: 'Quick Brown', phrase: true, position: 0 },
          { type: 'term', value: 'QUICK', phrase: false, position: 14 },
          { type: 'not', child: { type: 'term', value: 'fox', phrase: false, position: 21 } },
        ],
      });
      expect(query_info.normalized).toBe('("quick brown" AND "quick" AND NOT "fox")');
      expect(query_info.terms).toEqual(['quick brown', 'quick', 'fox']);
    });

    it('each search gets its own history id', async () => {
      const first = await find({ query: 'apple' });
      const second = await find({ query: 'apple' });
      expect(second.search_history_id).toBeGreaterThan(first.search_history_id);
    });

    it('the follow-up token carries the search arguments for this organization only', async () => {
      const body = await find({ query: 'duptext', channel_ids: [ids.beta!], unique_only: true, context_chars: 50 });
      const verified = await t.container.followUps.verify(orgId, body.follow_up_token);
      expect(verified).toEqual({
        historyId: body.search_history_id,
        args: { query: 'duptext', channel_ids: [ids.beta], unique_only: true, context_chars: 50 },
      });
      await expect(t.container.followUps.verify(otherOrgId, body.follow_up_token)).rejects.toThrow();
      await expect(t.container.followUps.verify(orgId, `${body.follow_up_token}x`)).rejects.toThrow();

      const plain = await find({ query: 'apple' });
      expect((await t.container.followUps.verify(orgId, plain.follow_up_token)).args).toEqual({
        query: 'apple',
        unique_only: false,
        context_chars: 500,
      });
    });
  });

  describe('Boolean semantics', () => {
    it.each([
      ['apple banana', [101, 104]],
      ['apple AND banana', [101, 104]],
      ['apple OR banana cherry', [101, 102, 103, 104, 106, 107]],
      ['apple OR banana AND cherry', [101, 102, 103, 104, 106, 107]],
      ['(apple OR banana) cherry', [102, 103, 104, 106]],
      ['(apple OR banana) AND cherry', [102, 103, 104, 106]],
      ['apple AND (banana OR cherry) -durian', [101, 102, 104]],
      ['apple -banana', [102, 106, 107]],
      ['apple NOT banana', [102, 106, 107]],
      ['NOT apple cherry', [103]],
      ['cherry NOT (apple OR banana)', []],
      ['durian -(apple OR banana)', [105]],
      ['apple OR durian', [101, 102, 104, 105, 106, 107]],
      // Lower-case operators are plain terms: "or" must occur in the text too.
      ['apple or durian', [107]],
      ['banana and cherry', []],
    ])('%s', async (query, expected) => {
      expect(await matchSet(query)).toEqual(expected);
    });

    it.each([
      ['"quick brown"', [201]],
      ['quick brown', [201, 202]],
      ['"QUICK Brown"', [201]],
      ['"brown fox" OR "quick fox"', [201, 202]],
      ['fox -"quick brown"', [202]],
      ['fox NOT "quick brown"', [202]],
      // Operators inside quotes are text.
      ['"apple OR durian"', [107]],
    ])('phrase %s', async (query, expected) => {
      expect(await matchSet(query)).toEqual(expected);
    });

    it('a match needs the whole term, not only its trigrams, whichever the index is asked for', async () => {
      expect(await matchSet('qzwxyv')).toEqual([902]);
      expect(await matchSet('qzwxyv', { channel_ids: [ids.words!] })).toEqual([902]);
      expect(await matchSet('qzwxyv OR zwxyvq')).toEqual([902, 903]);
      expect(await matchSet('qzw xyv -qzwxyv')).toEqual([901, 903]);
    });

    it('a query that only excludes matches everything else, with a warning', async () => {
      const body = await find({ query: 'NOT (apple OR banana)', channel_ids: [ids.fruit!] });
      expect(idsOf(body)).toEqual([105]);
      expect(body.warning).toMatch(/exclud/i);
      expect(await matchSet('-apple', { channel_ids: [ids.fruit!] })).toEqual([103, 105]);
    });

    it.each([
      ['price*2', [312]],
      ['what?', [314]],
      ['[draft]', [316]],
      ['draft]', [316, 317]],
      ['*', [312]],
    ])('wildcard characters are text: %s, with and without a channel filter', async (query, expected) => {
      expect(await matchSet(query)).toEqual(expected);
      expect(await matchSet(query, { channel_ids: [ids.words!] })).toEqual(expected);
    });

    it('a hyphen inside a word is text, not negation', async () => {
      expect(await matchSet('e-mail')).toEqual([311]);
      expect(await matchSet('send -e-mail')).toEqual([]);
    });
  });

  describe('Unicode case-insensitive substring matching', () => {
    it.each([
      ['базу', [301]],
      ['БАЗУ', [301]],
      ['сбербанк', [301]],
      ['СберБанка', [301]],
      ['продаю клиентов', [301]],
      ['بيانات', [302]],
      ['البطاقات الائتمانية', [302]],
      ['οδος', [303]],
      ['ΑΘΗΝΑ', [303]],
      ['acme.com', [304, 305]],
      ['ACME.COM', [304, 305]],
      ['user@acme.com', [305]],
      ['login.acme.com', [304]],
      ['Acme.Com -login', [305]],
      ['ccess', [305]],
      ['100%', [307]],
      ['user_name', [309]],
    ])('%s', async (query, expected) => {
      expect(await matchSet(query)).toEqual(expected);
    });
  });

  describe('short terms', () => {
    it.each([
      ['42', [401]],
      ['x9', [402]],
      ['42 OR x9', [401, 402]],
      ['token x9', [402]],
      ['"42"', [401]],
      ['leak -42', [309, 310]],
    ])('%s is found by scanning', async (query, expected) => {
      expect(await matchSet(query)).toEqual(expected);
    });

    it('a term under 3 characters earns a broad-query warning naming it', async () => {
      const body = await find({ query: 'x9 token' });
      expect(body.warning).toMatch(/broad/i);
      expect(body.warning).toContain('"x9"');
      expect(body.warning).not.toContain('"token"');
    });

    it('a precise query has no warning', async () => {
      expect((await find({ query: 'token' })).warning).toBeNull();
      // Three characters is long enough.
      const fox = await find({ query: 'fox' });
      expect(fox.warning).toBeNull();
      expect(idsOf(fox)).toEqual([202, 201]);
    });
  });

  describe('text_preview', () => {
    const preview = async (query: string, context_chars?: number) => {
      const body = await find({ query, ...(context_chars === undefined ? {} : { context_chars }) });
      expect(body.results).toHaveLength(1);
      return body.results[0]!.text_preview;
    };

    it('is context_chars characters centred on the match, with an ellipsis on each cut side', async () => {
      expect(await preview('needle', 16)).toBe(`${ELLIPSIS}xxxxxNEEDLEyyyyy${ELLIPSIS}`);
    });

    it('has no leading ellipsis when the match starts the text', async () => {
      expect(await preview('prefixmatch', 15)).toBe(`PREFIXMATCHzzzz${ELLIPSIS}`);
    });

    it('has no trailing ellipsis when the match ends the text, and still spends the whole budget', async () => {
      expect(await preview('tailmatch', 13)).toBe(`${ELLIPSIS}wwwwTAILMATCH`);
    });

    it('counts characters, not UTF-16 units, and never splits one', async () => {
      expect(await preview('emojipin', 12)).toBe(`${ELLIPSIS}😀😀EMOJIPIN😀😀${ELLIPSIS}`);
    });

    it('centres on the first match in the text, whatever the order of the query terms', async () => {
      expect(await preview('laterterm earlyterm', 19)).toBe(`${ELLIPSIS}pppppearlytermppppp${ELLIPSIS}`);
    });

    it('defaults to 500 characters', async () => {
      const body = await find({ query: 'midword' });
      const long = body.results.find((r) => r.message_id === 506)!;
      expect(long.text_preview).toBe(`${ELLIPSIS}${'a'.repeat(246)}MIDWORD${'b'.repeat(247)}${ELLIPSIS}`);
      expect(body.results.find((r) => r.message_id === 507)!.text_preview).toBe('short midword text');
    });

    it('is the whole text when the text fits', async () => {
      expect(await preview('сбербанк', 30)).toBe('Продаю БАЗУ клиентов Сбербанка');
    });

    it('context_chars must be a positive integer', async () => {
      await rejected({ query: 'needle', context_chars: 0 }, 'context_chars');
      await rejected({ query: 'needle', context_chars: -5 }, 'context_chars');
      await rejected({ query: 'needle', context_chars: 2.5 }, 'context_chars');
      await rejected({ query: 'needle', context_chars: '20' }, 'context_chars');
    });
  });

  describe('unique_only', () => {
    it('is off by default: one row per message, each counting its own channel', async () => {
      const body = await find({ query: 'duptext' });
      expect(body).toMatchObject({ total: 4, channels_matched: 3, total_pages: 1 });
      expect(idsOf(body)).toEqual([604, 603, 602, 601]);
      for (const row of body.results) {
        expect(row.channel_count).toBe(1);
        expect(row.channels_list).toEqual([row.channel_username ?? 'Gamma Group']);
      }
    });

    it('collapses identical texts across channels into one row listing them', async () => {
      const body = await find({ query: 'duptext', unique_only: true });
      expect(body).toMatchObject({ total: 2, channels_matched: 3, total_pages: 1 });
      expect(body.results).toHaveLength(2);
      const [different, collapsed] = body.results;
      expect(different).toMatchObject({ message_id: 604, channel_count: 1, channels_list: ['alpha'] });
      // The newest copy represents the group.
      expect(collapsed).toMatchObject({
        message_id: 603,
        channel_id: ids['Gamma Group'],
        text_preview: 'Fresh combo list DUPTEXT available',
        channel_count: 3,
      });
      expect([...collapsed!.channels_list!].sort()).toEqual(['Gamma Group', 'alpha', 'beta']);
    });

    it('counts only the requested channels when combined with channel_ids', async () => {
      const body = await find({ query: 'duptext', unique_only: true, channel_ids: [ids.alpha!, ids.beta!] });
      expect(body).toMatchObject({ total: 2, channels_matched: 2 });
      const collapsed = body.results.find((r) => r.channel_count > 1)!;
      expect(collapsed.message_id).toBe(602);
      expect(collapsed.channel_count).toBe(2);
      expect([...collapsed.channels_list!].sort()).toEqual(['alpha', 'beta']);
    });

    it('changes nothing when no text repeats', async () => {
      const body = await find({ query: 'apple', unique_only: true });
      expect(body.total).toBe(5);
      expect(body.results.every((r) => r.channel_count === 1)).toBe(true);
    });
  });

  describe('channel_ids', () => {
    it('restricts the search to those channels', async () => {
      const onlyBeta = await find({ query: 'duptext', channel_ids: [ids.beta!] });
      expect(idsOf(onlyBeta)).toEqual([602]);
      expect(onlyBeta.channels_matched).toBe(1);
      expect(await matchSet('duptext', { channel_ids: [ids.alpha!, ids['Gamma Group']!] })).toEqual([601, 603, 604]);
      expect(await matchSet('duptext', { channel_ids: [ids.alpha!, ids.alpha!] })).toEqual([601, 604]);
    });

    it('null means every channel', async () => {
      expect(await matchSet('duptext', { channel_ids: null })).toEqual([601, 602, 603, 604]);
    });

    it('a channel with no match gives an empty result', async () => {
      const body = await find({ query: 'duptext', channel_ids: [ids.fruit!] });
      expect(body).toMatchObject({ results: [], total: 0, channels_matched: 0, total_pages: 0 });
    });

    it('an unknown channel id is 400 naming channel_ids', async () => {
      const error = await rejected({ query: 'duptext', channel_ids: [ids.alpha, 999_999] }, 'channel_ids');
      expect(error.message).toContain('999999');
      const typed = expectError(
        await postSearch(t, token, { query: 'duptext', channel_ids: ['alpha'] }),
        400,
        'validation_failed',
      );
      expect(fieldsOf(typed).every((f) => f.startsWith('channel_ids'))).toBe(true);
    });
  });

  describe('ordering and paging', () => {
    it('lists matches newest first by message date', async () => {
      const body = await find({ query: 'ordertest', page_size: 100 });
      expect(idsOf(body)).toEqual(newestFirst);
      const dates = body.results.map((r) => Date.parse(r.date));
      expect(dates).toEqual([...dates].sort((a, b) => b - a));
      expect(body.results[0]!.date).toBe('2026-03-09T23:00:00.000Z');
    });

    it('pages partition the results in order', async () => {
      const pages = [];
      for (let page = 1; page <= 4; page++) pages.push(await find({ query: 'ordertest', page, page_size: 3 }));
      expect(pages.map((p) => p.results.length)).toEqual([3, 3, 3, 1]);
      expect(pages.flatMap(idsOf)).toEqual(newestFirst);
      for (const [index, p] of pages.entries())
        expect(p).toMatchObject({ total: 10, page: index + 1, page_size: 3, total_pages: 4, channels_matched: 4 });
    });

    it('a page beyond the last is empty but keeps the totals', async () => {
      const body = await find({ query: 'ordertest', page: 3, page_size: 5 });
      expect(body).toMatchObject({
        results: [],
        total: 10,
        channels_matched: 4,
        page: 3,
        page_size: 5,
        total_pages: 2,
      });
    });

    it('page_size defaults to 10 and accepts 100', async () => {
      const byDefault = await find({ query: 'ordertest OR apple' });
      expect(byDefault).toMatchObject({ total: 15, page: 1, page_size: 10, total_pages: 2 });
      expect(byDefault.results).toHaveLength(10);
      const max = await find({ query: 'ordertest OR apple', page_size: 100 });
      expect(max).toMatchObject({ page_size: 100, total_pages: 1 });
      expect(max.results).toHaveLength(15);
    });

    it('rejects page 0, page_size 0 and page_size 101', async () => {
      await rejected({ query: 'ordertest', page: 0 }, 'page');
      await rejected({ query: 'ordertest', page: -1 }, 'page');
      await rejected({ query: 'ordertest', page_size: 0 }, 'page_size');
      await rejected({ query: 'ordertest', page_size: 101 }, 'page_size');
    });
  });

  describe('truncated queries', () => {
    it('keeps the first 64 terms and says so', async () => {
      const extra = Array.from({ length: 69 }, (_, i) => `zq${String(i + 1).padStart(2, '0')}`);
      const query = ['ordertest', ...extra].join(' OR ');
      const body = await find({ query });
      expect(body.query_info.truncated).toBe(true);
      expect(body.query_info.query).toBe(query);
      expect(body.query_info.terms).toHaveLength(64);
      expect(body.query_info.terms.at(-1)).toBe('zq63');
      expect(body.warning).toMatch(/truncated/);
      expect(body.total).toBe(10);
    });

    it('cuts a query longer than 1000 characters at a term boundary', async () => {
      const body = await find({ query: `ordertest OR ${'q'.repeat(1200)}` });
      expect(body.query_info).toMatchObject({ truncated: true, terms: ['ordertest'], normalized: '"ordertest"' });
      expect(body.warning).toMatch(/truncated/);
      expect(body.total).toBe(10);
    });

    it('an ordinary query is not truncated', async () => {
      const body = await find({ query: 'ordertest' });
      expect(body.query_info.truncated).toBe(false);
      expect(body.warning).toBeNull();
    });
  });

  describe('bad requests', () => {
    it.each([
      ['(apple OR banana', 0],
      ['apple (banana OR (cherry)', 6],
      ['apple OR banana)', 15],
      ['apple OR', 6],
      ['apple AND', 6],
      ['apple AND OR banana', 10],
      ['AND apple', 0],
      ['NOT', 0],
      ['()', 0],
      ['"unterminated phrase', 0],
      ['apple ""', 6],
      ['   ', 0],
    ])('%j is 400 on query with position %i', async (query, position) => {
      const error = await rejected({ query }, 'query');
      expect(positionOf(error)).toBe(position);
      expect(error.fields![0]!.message.length).toBeGreaterThan(0);
    });

    it('an empty query string is 400 on query with a position', async () => {
      const error = await rejected({ query: '' }, 'query');
      expect(positionOf(error)).toBe(0);
    });

    it('a missing query is 400 naming it', async () => {
      await rejected({ unique_only: true }, 'query');
    });

    it('an unknown body field is 400 naming it', async () => {
      await rejected({ query: 'apple', sort: 'date' }, 'sort');
    });

    it('wrong types are 400, not coerced', async () => {
      await rejected({ query: 42 }, 'query');
      await rejected({ query: 'apple', unique_only: 'yes' }, 'unique_only');
      await rejected({ query: 'apple', page: '2' }, 'page');
    });

    it('a rejected search is not recorded in history', async () => {
      const before = (await t.request({ method: 'GET', url: '/service/messenger-search-history/', token })).json() as {
        total: number;
      };
      await rejected({ query: '(apple' }, 'query');
      await rejected({ query: 'apple', channel_ids: [999_999] }, 'channel_ids');
      // A known channel beside an unknown one: on PostgreSQL the statement that counts the
      // channels also records the search, and must not.
      await rejected({ query: 'apple', channel_ids: [ids.fruit!, 999_999] }, 'channel_ids');
      const after = (await t.request({ method: 'GET', url: '/service/messenger-search-history/', token })).json() as {
        total: number;
      };
      expect(after.total).toBe(before.total);
    });
  });
});
