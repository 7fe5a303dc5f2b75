import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MigrationContext } from '../../src/db/migration-helpers.ts';
import { SEARCH_TUNING } from '../../src/modules/search/match-count.ts';
import { createSearchRepository } from '../../src/modules/search/search.repository.ts';
import { matchCompilers } from '../../src/modules/sources/common/query/message-search.sql.ts';
import { matchesFolded, parseQuery } from '../../src/modules/sources/common/query/query-language.ts';
import { up as buildWordBitmaps } from '../../src/modules/sources/messenger/migrations/0012_word_bitmaps.ts';
import { channel, loadCorpus, message } from '../support/corpus.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';
import { narrowByWords, bitmapWordNames } from '../support/word-index.ts';

/**
 * PostgreSQL counts a broad query of frequent words from their bitmaps (migration
 * messenger/0012, word-index.ts's neighbour word-bitmaps.ts): the count must equal what the
 * texts hold up to the search's watermark, for bitmaps built when a word became frequent, bits
 * set by later writes, messages with a word too long for the lexicon, rare words beside
 * frequent ones, and bitmaps built by the migration over a store that had none.
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
    await loadCorpus(t, [
      channel(
        'third',
        texts(60, 180).map((text, i) => message(i + 1, text)),
      ),
    ]);
    await readRows();
  });
  afterAll(() => t?.close());

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
      }
    }
  }

  const frequentWords = () => bitmapWordNames(t.container.store.db);

  it('counts exactly from bitmaps built when the words became frequent and bits set by later writes', async () => {
    expect(await frequentWords()).toEqual(expect.arrayContaining(['alpha', 'betaword', 'delta', 'gamma']));
    await expectExactCounts();
  });

  it('builds the bitmaps of a store that had none (the migration)', async () => {
    const db = t.container.store.db as unknown as Kysely<unknown>;
    await sql`drop table message_word_bits`.execute(db);
    await sql`drop table message_frequent_words`.execute(db);
    await buildWordBitmaps(db, { engine: 'postgres' } as MigrationContext);
    expect(await frequentWords()).toEqual(expect.arrayContaining(['alpha', 'betaword', 'delta', 'gamma']));
    await loadCorpus(t, [
      channel(
        'after_upgrade',
        texts(40, 240).map((text, i) => message(i + 1, text)),
      ),
    ]);
    await readRows();
    await expectExactCounts();
  });
});
