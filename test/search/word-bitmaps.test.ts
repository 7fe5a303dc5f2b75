import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MigrationContext } from '../../src/db/migration-helpers.ts';
import { SEARCH_TUNING } from '../../src/modules/search/match-count.ts';
import { createSearchRepository } from '../../src/modules/search/search.repository.ts';
import { matchCompilers } from '../../src/modules/sources/common/query/message-search.sql.ts';
import { foldText, matchesFolded, parseQuery } from '../../src/modules/sources/common/query/query-language.ts';
import { up as buildWordBitmaps } from '../../src/modules/sources/messenger/migrations/0012_word_bitmaps.ts';
import { up as buildChannelWordBitmaps } from '../../src/modules/sources/messenger/migrations/0013_channel_word_bitmaps.ts';
import { channel, loadCorpus, message } from '../support/corpus.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';
import { narrowByWords, bitmapWordNames } from '../support/word-index.ts';

/**
 * PostgreSQL counts a broad query of frequent words from their bitmaps (migrations
 * messenger/0012 and 0013, word-index.ts's neighbour word-bitmaps.ts): the count must equal what
 * the texts hold up to the search's watermark, for bitmaps built when a word became frequent,
 * bits set by later writes, messages with a word too long for the lexicon, rare words beside
 * frequent ones, and bitmaps built by the migrations over a store that had none. A channel
 * filter counts each channel's own bitmaps, over positions its messages took in several writes.
 */
const texts = (n: number, from: number) =>
  Array.from({ length: n }, (_, i) => {
    const k = from + i;
    const words = [k % 2 === 0 ? 'alpha' : 'gamma', k % 3 === 0 ? 'betaword' : 'delta', `n${k}`];
    if (k % 17 === 0) words.push(`${'x'.repeat(70)}alpha`);
    if (k === 5) words.push('alphabet');
    return words.join(' ');
  });

const QUERIES = ['alpha', 'beta', 'alpha OR delta', 'gamma OR betaword', 'alph', 'n1'];

describe.skipIf(testEngine !== 'postgres')('frequent words counted from their bitmaps (postgres)', () => {
  let t: TestApp;
  let rows: { id: number; channel_id: number; text_folded: string }[];

  async function readRows() {
    rows = (
      await t.container.store.db.selectFrom('messages').select(['id', 'channel_id', 'text_folded']).execute()
    ).map((r) => ({ id: Number(r.id), channel_id: Number(r.channel_id), text_folded: r.text_folded }));
  }

  beforeAll(async () => {
    t = await createTestApp();
    await loadCorpus(t, [
      channel(
        'first',
        texts(120, 0).map((text, i) => message(i + 1, text)),
      ),
    ]);
    // The statistics name the frequent words; the next write builds their bitmaps from the
    // word index, and the one after sets its own messages' bits.
    await sql`analyze message_words`.execute(t.container.store.db);
    await loadCorpus(t, [
      channel(
        'second',
        texts(60, 120).map((text, i) => message(i + 1, text)),
      ),
    ]);
    // Two channels written side by side, one of them again: its positions go on where they were.
    await loadCorpus(t, [
      channel(
        'third',
        texts(60, 180).map((text, i) => message(i + 1, text)),
      ),
      channel(
        'first',
        texts(30, 300).map((text, i) => message(1000 + i, text)),
      ),
    ]);
    await readRows();
    await t.createUser({ org: 'Bitmaps', email: 'bitmaps@example.test' });
    token = (await t.login('bitmaps@example.test')).access;
  });
  afterAll(() => t?.close());

  let token: string;

  /** Every query over each channel and over pairs of them, through the API, against the texts. */
  async function expectExactChannelCounts() {
    const channelIds = [...new Set(rows.map((r) => r.channel_id))].sort((a, b) => a - b);
    const filters = [...channelIds.map((id) => [id]), channelIds.slice(0, 2), channelIds.slice(1)];
    for (const text of QUERIES) {
      const tree = parseQuery(text).tree;
      for (const filter of filters) {
        const matches = rows.filter((r) => filter.includes(r.channel_id) && matchesFolded(tree, r.text_folded));
        t.clock.advance(1000); // under the account's requests a second
        const response = await t.request({
          method: 'POST',
          url: '/service/messenger-search-create/',
          token,
          body: { query: text, channel_ids: filter },
        });
        expect(response.statusCode, response.body).toBe(200);
        const { total, channels_matched } = response.json<{ total: number; channels_matched: number }>();
        expect({ total, channels_matched }, `${text} in ${filter.join(',')}`).toEqual({
          total: matches.length,
          channels_matched: new Set(matches.map((r) => r.channel_id)).size,
        });
      }
    }
  }

  /** Every query's count at watermarks below and at the newest message, against the texts. */
  async function expectExactCounts() {
    const { store } = t.container;
    // channelsFromMatches 0: every query of words is broad enough for its bitmaps.
    const searches = createSearchRepository({
      reader: store.reader,
      readerSlots: 2,
      engine: store.engine,
      tuning: { ...SEARCH_TUNING, channelsFromMatches: 0, probeRows: 2 },
    });
    const maxId = Math.max(...rows.map((r) => r.id));
    for (const text of QUERIES) {
      const tree = parseQuery(text).tree;
      const words = (await narrowByWords(store.reader, tree))!;
      for (const watermark of [maxId, maxId - 70, 100]) {
        const matches = rows.filter((r) => r.id <= watermark && matchesFolded(tree, r.text_folded));
        const query = {
          match: matchCompilers.postgres(tree, { words }),
          maxMessageId: watermark,
          words: [words.query],
          ...(words.anyOf ? { anyWords: words.anyOf } : {}),
        };
        expect(await searches.count(query, false), `${text} at ${watermark}`).toEqual({
          total: matches.length,
          channels: new Set(matches.map((r) => r.channel_id)).size,
          groups: matches.length,
        });
        // A channel filter whose channels grew after the watermark: counted up to their sizes then.
        const filter = [...new Set(rows.map((r) => r.channel_id))].slice(0, 2);
        const inFilter = matches.filter((r) => filter.includes(r.channel_id));
        const sizes = filter.map((id) => [id, rows.filter((r) => r.channel_id === id && r.id <= watermark).length]);
        const filtered = { ...query, channelIds: filter, channelPositions: new Map(sizes as [number, number][]) };
        expect(await searches.count(filtered, false), `${text} at ${watermark} in ${filter.join(',')}`).toEqual({
          total: inFilter.length,
          channels: new Set(inFilter.map((r) => r.channel_id)).size,
          groups: inFilter.length,
        });
      }
    }
  }

  const frequentWords = () => bitmapWordNames(t.container.store.db);

  it('counts exactly from bitmaps built when the words became frequent and bits set by later writes', async () => {
    expect(await frequentWords()).toEqual(expect.arrayContaining(['alpha', 'betaword', 'delta', 'gamma']));
    await expectExactCounts();
  });

  it("counts a channel filter exactly from its channels' bitmaps", async () => {
    const { rows: bitmapRows } = await sql<{ n: string }>`
      select count(*) as n from message_channel_word_bits`.execute(t.container.store.db);
    expect(Number(bitmapRows[0]!.n)).toBeGreaterThan(0);
    await expectExactChannelCounts();
  });

  it('builds the bitmaps of a store that had none (the migration)', async () => {
    const db = t.container.store.db as unknown as Kysely<unknown>;
    await sql`drop table message_channel_word_bits, message_channel_sizes, message_word_bits, message_frequent_words`.execute(
      db,
    );
    await buildWordBitmaps(db, { engine: 'postgres' } as MigrationContext);
    await buildChannelWordBitmaps(db, { engine: 'postgres' } as MigrationContext);
    expect(await frequentWords()).toEqual(expect.arrayContaining(['alpha', 'betaword', 'delta', 'gamma']));
    await loadCorpus(t, [
      channel(
        'after_upgrade',
        texts(40, 240).map((text, i) => message(i + 1, text)),
      ),
    ]);
    await readRows();
    await expectExactCounts();
    await expectExactChannelCounts();
  });
});

describe.skipIf(testEngine !== 'postgres')('a store loaded in one go gets its bitmaps (postgres)', () => {
  let t: TestApp;
  afterAll(() => t?.close());

  it('analyzes the word index after a large write and builds the bitmaps of its frequent words, without autovacuum', async () => {
    t = await createTestApp();
    const written = texts(1500, 0);
    await loadCorpus(t, [
      channel(
        'bulk',
        written.map((text, i) => message(i + 1, text)),
      ),
    ]);
    // The write's caller does not wait for the statistics; the background work ends here.
    await t.container.sourceContext.background.settle();
    expect(await bitmapWordNames(t.container.store.db)).toEqual(
      expect.arrayContaining(['alpha', 'betaword', 'delta', 'gamma']),
    );
    await t.createUser({ org: 'Bulk', email: 'bulk@example.test' });
    const token = (await t.login('bulk@example.test')).access;
    for (const query of QUERIES) {
      const tree = parseQuery(query).tree;
      t.clock.advance(1000);
      const response = await t.request({
        method: 'POST',
        url: '/service/messenger-search-create/',
        token,
        body: { query },
      });
      expect(response.json<{ total: number }>().total, query).toBe(
        written.filter((text) => matchesFolded(tree, foldText(text))).length,
      );
    }
  });

  it('leaves a small write to the statistics it has', async () => {
    const before = await bitmapWordNames(t.container.store.db);
    await loadCorpus(t, [
      channel(
        'small',
        Array.from({ length: 50 }, (_, i) => message(i + 1, `omega n${i}`)),
      ),
    ]);
    await t.container.sourceContext.background.settle();
    expect(await bitmapWordNames(t.container.store.db)).toEqual(before);
  });
});
