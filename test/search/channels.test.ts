import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel, loadCorpus, message, type ChannelItem } from '../support/corpus.ts';
import { expectError, fieldsOf } from '../support/http.ts';
import { getJson, type ListBody } from '../support/messenger-search.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';

/** GET /service/messenger-channels/ and /service/messenger-channels-categories/ (spec 2.4, 4.2). */

const CHANNELS = '/service/messenger-channels/';
const CATEGORIES = '/service/messenger-channels-categories/';
const FIRST_SCRAPE = '2026-03-01T12:00:00.000Z';
const SECOND_SCRAPE = '2026-03-02T08:30:00.000Z';

const bulk = Array.from({ length: 5 }, (_, i) =>
  channel(`bulk_${i + 1}`, [message(100 + i, `bulk message ${i + 1}`)], { title: `Bulk ${i + 1}`, category: 'Misc' }),
);

interface CategoryItem {
  id: number;
  name: string;
  channel_count: number;
}

describe('messenger channels and categories over HTTP', () => {
  let t: TestApp;
  let token: string;
  let all: ChannelItem[];
  let categories: ListBody<CategoryItem>;

  beforeAll(async () => {
    // Rate limits (spec 8.1) are another suite's subject; the injected requests all share one clock second.
    t = await createTestApp({ env: { DRAGNET_RATE_LIMITS: 'off' } });
    await t.createUser({ org: 'Acme', email: 'analyst@acme.test' });

    t.clock.set(FIRST_SCRAPE);
    await loadCorpus(t, [
      channel('alpha_leaks', [message(1, 'one'), message(2, 'two'), message(3, 'three')], {
        title: 'Alpha Leaks',
        category: 'Fraud',
      }),
      channel('beta_cards', [message(1, 'один'), message(2, 'два')], { title: 'Бета Кардинг', category: 'Carding' }),
      channel('gamma', [message(1, 'gone quiet')], { title: 'Gamma Group', category: 'Fraud', isActive: false }),
      channel(null, [], { title: 'Дельта без ника' }),
      ...bulk,
      channel('mover', [message(1, 'moving')], { category: 'Old' }),
    ]);
    t.clock.set(SECOND_SCRAPE);
    // A second scrape of alpha_leaks: one message it already has, one new one.
    await loadCorpus(t, [
      channel('alpha_leaks', [message(3, 'three'), message(4, 'four')], { title: 'Alpha Leaks', category: 'Fraud' }),
      channel('mover', [], { category: 'New' }),
    ]);

    token = (await t.login('analyst@acme.test')).access;
    all = (await getJson<ListBody<ChannelItem>>(t, token, `${CHANNELS}?page_size=500`)).items;
    categories = await getJson<ListBody<CategoryItem>>(t, token, CATEGORIES);
  });
  afterAll(() => t.close());

  const list = (query = '') => getJson<ListBody<ChannelItem>>(t, token, `${CHANNELS}${query}`);
  const labels = (body: ListBody<ChannelItem>) => body.items.map((c) => c.username ?? c.title).sort();
  const categoryId = (name: string) => categories.items.find((k) => k.name === name)!.id;
  const badQuery = async (query: string, field: string) => {
    const error = expectError(
      await t.request({ method: 'GET', url: `${CHANNELS}${query}`, token }),
      400,
      'validation_failed',
    );
    expect(fieldsOf(error)).toEqual([field]);
  };

  describe('channel list', () => {
    it('lists every channel with page 1 and page_size 100 by default', async () => {
      const body = await list();
      expect(body).toMatchObject({ total: 10, page: 1, page_size: 100, total_pages: 1 });
      expect(labels(body)).toEqual(
        [
          'alpha_leaks',
          'beta_cards',
          'gamma',
          'Дельта без ника',
          'bulk_1',
          'bulk_2',
          'bulk_3',
          'bulk_4',
          'bulk_5',
          'mover',
        ].sort(),
      );
    });

    it('gives each channel its username, title, category, status, last scrape and message count', () => {
      const byLabel = Object.fromEntries(all.map((c) => [c.username ?? c.title, c]));
      expect(byLabel.alpha_leaks).toMatchObject({
        username: 'alpha_leaks',
        title: 'Alpha Leaks',
        category_name: 'Fraud',
        is_active: true,
        last_scraped_at: SECOND_SCRAPE,
        total_messages_scraped: 4,
      });
      expect(byLabel.beta_cards).toMatchObject({
        username: 'beta_cards',
        title: 'Бета Кардинг',
        category_name: 'Carding',
        is_active: true,
        last_scraped_at: FIRST_SCRAPE,
        total_messages_scraped: 2,
      });
      expect(byLabel.gamma).toMatchObject({ is_active: false, category_name: 'Fraud', total_messages_scraped: 1 });
      expect(byLabel['Дельта без ника']).toMatchObject({
        username: null,
        title: 'Дельта без ника',
        category_name: null,
        is_active: true,
        total_messages_scraped: 0,
      });
      expect(byLabel.mover).toMatchObject({
        category_name: 'New',
        last_scraped_at: SECOND_SCRAPE,
        total_messages_scraped: 1,
      });
      for (const item of all) {
        expect(Number.isInteger(item.id)).toBe(true);
        expect(typeof item.is_active).toBe('boolean');
      }
    });

    it('pages partition the list', async () => {
      const pages = [];
      for (let page = 1; page <= 4; page++) pages.push(await list(`?page=${page}&page_size=3`));
      expect(pages.map((p) => p.items.length)).toEqual([3, 3, 3, 1]);
      for (const [index, p] of pages.entries())
        expect(p).toMatchObject({ total: 10, page: index + 1, page_size: 3, total_pages: 4 });
      const ids = pages.flatMap((p) => p.items.map((c) => c.id));
      expect(new Set(ids).size).toBe(10);
      expect([...ids].sort((a, b) => a - b)).toEqual(all.map((c) => c.id).sort((a, b) => a - b));
      expect(await list('?page=5&page_size=3')).toMatchObject({ items: [], total: 10, page: 5 });
    });

    it('accepts page_size 1 and 500 and rejects 0, 501 and page 0', async () => {
      expect((await list('?page_size=1')).items).toHaveLength(1);
      expect((await list('?page_size=500')).items).toHaveLength(10);
      await badQuery('?page_size=0', 'page_size');
      await badQuery('?page_size=501', 'page_size');
      await badQuery('?page=0', 'page');
      await badQuery('?page=-1', 'page');
      await badQuery('?page=two', 'page');
    });

    it.each([
      ['ALPHA', ['alpha_leaks']],
      ['leaks', ['alpha_leaks']],
      ['Gamma Gr', ['gamma']],
      ['beta_c', ['beta_cards']],
      ['бета', ['beta_cards']],
      ['КАРДИНГ', ['beta_cards']],
      ['без ника', ['Дельта без ника']],
      ['bulk', ['bulk_1', 'bulk_2', 'bulk_3', 'bulk_4', 'bulk_5']],
      ['%', []],
      ['nothing-like-this', []],
    ])('search=%s matches titles and usernames case-insensitively', async (text, expected) => {
      const body = await list(`?search=${encodeURIComponent(text)}`);
      expect(labels(body)).toEqual([...expected].sort());
      expect(body.total).toBe(expected.length);
    });

    it('filters by category_id', async () => {
      expect(labels(await list(`?category_id=${categoryId('Fraud')}`))).toEqual(['alpha_leaks', 'gamma']);
      expect((await list(`?category_id=${categoryId('Misc')}`)).total).toBe(5);
      expect((await list(`?category_id=${categoryId('Old')}`)).total).toBe(0);
      expect(await list('?category_id=999999')).toMatchObject({ items: [], total: 0, total_pages: 0 });
      await badQuery('?category_id=0', 'category_id');
      await badQuery('?category_id=fraud', 'category_id');
    });

    it('filters by is_active', async () => {
      expect(labels(await list('?is_active=false'))).toEqual(['gamma']);
      const active = await list('?is_active=true');
      expect(active.total).toBe(9);
      expect(active.items.every((c) => c.is_active)).toBe(true);
      await badQuery('?is_active=maybe', 'is_active');
    });

    it('combines filters', async () => {
      expect(labels(await list(`?category_id=${categoryId('Fraud')}&is_active=true`))).toEqual(['alpha_leaks']);
      expect(labels(await list(`?category_id=${categoryId('Fraud')}&search=group`))).toEqual(['gamma']);
      expect(await list(`?category_id=${categoryId('Carding')}&search=alpha`)).toMatchObject({ items: [], total: 0 });
    });

    it('sees a channel switched off by a later scrape', async () => {
      await loadCorpus(t, [channel('bulk_5', [], { title: 'Bulk 5', category: 'Misc', isActive: false })]);
      expect(labels(await list('?is_active=false'))).toEqual(['bulk_5', 'gamma']);
      await loadCorpus(t, [channel('bulk_5', [], { title: 'Bulk 5', category: 'Misc', isActive: true })]);
      expect(labels(await list('?is_active=false'))).toEqual(['gamma']);
    });
  });

  describe('categories', () => {
    it('lists every category with its channel count and the total', () => {
      expect(categories).toMatchObject({ total: 5, page: 1, total_pages: 1 });
      const counts = Object.fromEntries(categories.items.map((k) => [k.name, k.channel_count]));
      expect(counts).toEqual({ Carding: 1, Fraud: 2, Misc: 5, New: 1, Old: 0 });
      for (const item of categories.items) {
        expect(Object.keys(item).sort()).toEqual(['channel_count', 'id', 'name']);
        expect(Number.isInteger(item.id)).toBe(true);
      }
    });

    it('ids match the category filter of the channel list', async () => {
      for (const item of categories.items)
        expect((await list(`?category_id=${item.id}`)).total).toBe(item.channel_count);
    });

    it('pages', async () => {
      const first = await getJson<ListBody<CategoryItem>>(t, token, `${CATEGORIES}?page_size=2`);
      const third = await getJson<ListBody<CategoryItem>>(t, token, `${CATEGORIES}?page=3&page_size=2`);
      expect(first).toMatchObject({ total: 5, page: 1, page_size: 2, total_pages: 3 });
      expect(first.items).toHaveLength(2);
      expect(third.items).toHaveLength(1);
      const error = expectError(
        await t.request({ method: 'GET', url: `${CATEGORIES}?page=0`, token }),
        400,
        'validation_failed',
      );
      expect(fieldsOf(error)).toEqual(['page']);
    });
  });
});
