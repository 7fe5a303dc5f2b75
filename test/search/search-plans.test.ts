import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCorpus } from '../../src/modules/sources/messenger/index.ts';
import { matchCompilers, type SearchHints } from '../../src/modules/sources/common/query/message-search.sql.ts';
import { matchesFolded, parseQuery, type QueryNode } from '../../src/modules/sources/common/query/query-language.ts';
import { SEARCH_TUNING } from '../../src/modules/search/match-count.ts';
import type { MatchQuery, OrderKey } from '../../src/modules/search/match-source.ts';
import { createSearchRepository } from '../../src/modules/search/search.repository.ts';
import { createTrigramStats } from '../../src/modules/sources/common/query/trigram-stats.ts';
import type { WordNarrowing } from '../../src/modules/sources/common/query/word-index.ts';
import { channel, loadCorpus, message } from '../support/corpus.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { scaled } from '../support/wait.ts';
import { narrowByWords, bitmapWordNames } from '../support/word-index.ts';

/**
 * A search picks its plan by estimates (which trigrams are rare, how many matches there are):
 * counting from the positional index or checking candidate rows, splitting the count over the
 * readers, probing channels, walking the date index or sorting the matches. Every plan must give
 * the same answer, so each is forced here on a small corpus and compared with matchesFolded.
 */

interface Row {
  id: number;
  channel_id: number;
  date: number;
  text_folded: string;
  text_hash: string;
}

const QUERIES = [
  'password',
  'with',
  'fresh AND logs',
  'combo OR логи',
  'password -fresh',
  'billing42@globex.com',
  'lo',
  '-password',
  '"access to"',
  'логи -база',
  'zzqx',
  // Punctuation inside, a word piece > 64 characters, no word character at all (PostgreSQL's word pieces).
  'globex.com -billing42@globex.com',
  '"logs: fresh"',
  'xxxxxxxxxx.password',
  '!!!',
];

/** Every trigram as rare: the whole query goes to the positional index where it can. */
const allRare = () => 0.001;
/** Trigrams by their first character: the narrowing finds a rare one, the whole query costs more. */
const someRare = (trigram: string) => (trigram.codePointAt(0)! % 2 === 0 ? 1e-6 : 1);

describe('search plans agree with each other and with matchesFolded', () => {
  let t: TestApp;
  let rows: Row[];
  let channelIds: number[];
  const seen = { complete: 0, checked: 0, words: 0, narrowed: 0 };

  beforeAll(async () => {
    t = await createTestApp();
    await loadCorpus(t, [
      ...generateCorpus({
        seed: 7,
        channels: 12,
        messages: 3000,
        start: new Date('2025-01-01T00:00:00Z'),
        spanDays: 30,
      }),
      // A channel no broad English word reaches, and one whose only match is older than any probe reads.
      channel(
        'russian_only',
        Array.from({ length: 40 }, (_, i) => message(i + 1, `свежие логи база ${i}`)),
      ),
      // Words longer than the lexicon keeps, and terms inside longer words (PostgreSQL's word index).
      channel('long_words', [
        message(1, `token ${'x'.repeat(70)}password${'y'.repeat(10)} here`),
        message(2, `${'z'.repeat(80)} and fresh logs`),
        message(3, 'mypasswords123 combo'),
        message(4, `логи${'ж'.repeat(90)}`),
        message(5, 'wow!!! billing42@globex.com has logs: fresh ones'),
        message(6, `${'x'.repeat(70)}.password leak`),
      ]),
      channel('old_match', [
        message(1, 'password once, long ago', { date: Date.parse('2024-01-01T00:00:00Z') }),
        ...Array.from({ length: 40 }, (_, i) =>
          message(i + 2, `nothing to see ${i}`, { date: Date.parse('2025-06-01T00:00:00Z') + i }),
        ),
      ]),
    ]);
    if (t.container.store.engine === 'postgres') {
      // The word index's statistics name the frequent words; the next write gives them bitmaps
      // (word-bitmaps.ts), built from the rows above, and sets its own messages' bits.
      await sql`analyze message_words`.execute(t.container.store.db);
      await loadCorpus(t, [
        channel('after_stats', [message(1, 'password with fresh logs, written after the statistics')]),
      ]);
      // Written once the words have bitmaps: the writer sets these messages' bits.
      await loadCorpus(t, [
        channel('after_bitmaps', [message(1, 'with logs only'), message(2, `${'q'.repeat(70)} password with`)]),
      ]);
    }
    rows = (
      await t.container.store.db
        .selectFrom('messages')
        .select(['id', 'channel_id', 'date', 'text_folded', 'text_hash'])
        .execute()
    ).map((r) => ({
      id: Number(r.id),
      channel_id: Number(r.channel_id),
      date: Number(r.date),
      text_folded: r.text_folded,
      text_hash: r.text_hash,
    }));
    const channels = await t.container.store.db.selectFrom('channels').select('id').orderBy('id').execute();
    channelIds = channels.map((c) => Number(c.id));
  });
  afterAll(() => t.close());

  const newestFirst = (a: Row, b: Row) => b.date - a.date || b.id - a.id;

  function expected(tree: QueryNode, watermark: number, channelFilter: Set<number> | null) {
    const matches = rows
      .filter(
        (r) =>
          r.id <= watermark &&
          (!channelFilter || channelFilter.has(r.channel_id)) &&
          matchesFolded(tree, r.text_folded),
      )
      .sort(newestFirst);
    const representatives = matches.filter((r, i) => matches.findIndex((o) => o.text_hash === r.text_hash) === i);
    return {
      counts: {
        total: matches.length,
        channels: new Set(matches.map((r) => r.channel_id)).size,
        groups: representatives.length,
      },
      order: matches.map((r) => r.id),
      uniqueOrder: representatives.map((r) => r.id),
    };
  }

  const channelSizes = (watermark: number, filter: number[]) =>
    new Map(filter.map((id) => [id, rows.filter((r) => r.channel_id === id && r.id <= watermark).length]));

  const tunings = [
    SEARCH_TUNING,
    { splitFromRows: 1, splitChannelsFromRows: 1, channelsFromMatches: 0, probeRows: 2, rowCostInIndexEntries: 0 },
    { splitFromRows: 1, splitChannelsFromRows: 1, channelsFromMatches: 0, probeRows: 1, rowCostInIndexEntries: 1e9 },
  ];

  /** Each query without, and on PostgreSQL where it can, with the word index's narrowing. */
  async function wordVariants(tree: QueryNode): Promise<(WordNarrowing | null)[]> {
    const words = t.container.store.engine === 'postgres' ? await narrowByWords(t.container.store.reader, tree) : null;
    if (words) seen.words++;
    return words ? [null, words] : [null];
  }

  it.each(QUERIES)(
    '%s',
    async (text) => {
      const { store } = t.container;
      const tree = parseQuery(text).tree;
      const maxId = Math.max(...rows.map((r) => r.id));
      const { rarity } = await createTrigramStats(store.reader).estimate(maxId);
      const hintSets: SearchHints[] = [
        { rarity },
        { rarity: allRare },
        { rarity: someRare },
        {},
        { withoutIndex: true },
      ];
      // Below the newest messages too, as a re-read of an older search runs.
      for (const watermark of [maxId, maxId - 500]) {
        for (const filter of [null, channelIds.filter((_, i) => i % 3 === 0)]) {
          const want = expected(tree, watermark, filter && new Set(filter));
          for (const hints of hintSets) {
            for (const words of await wordVariants(tree)) {
              const match = matchCompilers[store.engine](tree, { ...hints, words });
              if (match.complete) seen.complete++;
              else seen.checked++;
              if (match.narrowing?.engine === 'postgres') seen.narrowed++;
              // An exact count from the word index takes no tuning but the one counting a broad
              // query of frequent words from their bitmaps (channelsFromMatches 0).
              for (const tuning of words?.exact ? tunings.slice(0, 2) : tunings) {
                const query: MatchQuery = {
                  match,
                  maxMessageId: watermark,
                  // The planner reads the chosen channels first when it leaves the index out.
                  ...(filter ? { channelIds: filter, channelsFirst: hints.withoutIndex === true } : {}),
                  ...(words?.exact ? { words: [words.query] } : {}),
                  ...(words?.anyOf ? { anyWords: words.anyOf } : {}),
                  // What a search reads with its watermark: each chosen channel's messages up to it.
                  ...(words?.anyOf && filter ? { channelPositions: channelSizes(watermark, filter) } : {}),
                };
                const searches = createSearchRepository({
                  reader: store.reader,
                  readerSlots: 3,
                  engine: store.engine,
                  tuning,
                });
                const label = `${text} ${JSON.stringify({ watermark, filter: filter !== null, hints: Object.keys(hints), complete: match.complete, tuning })}`;
                expect(await searches.count(query, false), label).toEqual({
                  ...want.counts,
                  groups: want.counts.total,
                });
                expect(await searches.count(query, true), label).toEqual(want.counts);
                // A filter's walk reads the channel index when its channels look small (SQLite), else the date index.
                const paged = filter ? [query, { ...query, channelMessages: 0 }] : [query];
                for (const [plan, query] of paged.flatMap((q) => [['walk', q] as const, ['sort', q] as const])) {
                  const ids = (keys: OrderKey[]) => keys.map((k) => Number(k.id));
                  expect(
                    ids(await searches.page(query, { plan, uniqueOnly: false, offset: 0, limit: 10 })),
                    `${label} ${plan} ${query.channelMessages ?? ''}`,
                  ).toEqual(want.order.slice(0, 10));
                  expect(
                    ids(await searches.page(query, { plan, uniqueOnly: false, offset: 7, limit: 10 })),
                    `${label} ${plan} ${query.channelMessages ?? ''}`,
                  ).toEqual(want.order.slice(7, 17));
                  expect(
                    ids(await searches.page(query, { plan, uniqueOnly: true, offset: 3, limit: 10 })),
                    `${label} ${plan} ${query.channelMessages ?? ''}`,
                  ).toEqual(want.uniqueOrder.slice(3, 13));
                  const fifth = rows.find((r) => r.id === want.order[4]);
                  if (fifth) {
                    const after = { id: fifth.id, date: fifth.date };
                    expect(
                      ids(await searches.page(query, { plan, uniqueOnly: false, offset: 2, limit: 10, after })),
                      `${label} ${plan} ${query.channelMessages ?? ''}`,
                    ).toEqual(want.order.slice(7, 17));
                  }
                }
              }
            }
          }
        }
      }
      // Every plan, tuning and hint of one query: hundreds of searches, a minute on a busy machine.
    },
    scaled(120_000),
  );

  it('every kind of query was run: answered by the index alone (SQLite) or the word index (PostgreSQL), and checked row by row', () => {
    expect(seen.checked).toBeGreaterThan(0);
    if (t.container.store.engine === 'sqlite') expect(seen.complete).toBeGreaterThan(0);
    else {
      expect(seen.words).toBeGreaterThan(0);
      expect(seen.narrowed).toBeGreaterThan(0);
    }
  });

  it('gives the frequent words bitmaps (PostgreSQL), which the broad counts above were taken from', async () => {
    if (t.container.store.engine !== 'postgres') return;
    expect(await bitmapWordNames(t.container.store.db)).toEqual(
      expect.arrayContaining(['password', 'with', 'fresh', 'logs']),
    );
  });

  it('walks the chosen channels as a prepared statement (PostgreSQL), past its five custom plans, with the same answer each time', async () => {
    const { store } = t.container;
    if (store.engine !== 'postgres') return;
    const tree = parseQuery('password').tree;
    const filter = channelIds.filter((_, i) => i % 3 === 0);
    const maxMessageId = Math.max(...rows.map((r) => r.id));
    const want = expected(tree, maxMessageId, new Set(filter)).order.slice(0, 10);
    expect(want).toHaveLength(10);
    const query: MatchQuery = {
      match: matchCompilers.postgres(tree, {}),
      maxMessageId,
      channelIds: filter,
      channelsFirst: true,
    };
    await store.reader.connection().execute(async (db) => {
      // The walks above may have run on this connection: its statements' runs, before and after.
      const walks = async () => {
        const { rows: statements } = await sql<{ name: string; runs: number }>`
          select name, (generic_plans + custom_plans)::int as runs from pg_prepared_statements
          where statement like '%cross join lateral%'`.execute(db);
        return new Map(statements.map((s) => [s.name, s.runs]));
      };
      const before = await walks();
      const searches = createSearchRepository({ reader: db, readerSlots: 1, engine: store.engine });
      for (let run = 0; run < 7; run++) {
        const page = await searches.pageRows(query, { plan: 'walk', uniqueOnly: false, offset: 0, limit: 10 });
        expect(page.map((row) => Number(row.id))).toEqual(want);
      }
      const ran = [...(await walks())].map(([name, runs]) => runs - (before.get(name) ?? 0)).filter((n) => n > 0);
      expect(ran).toEqual([7]);
    });
  });
});
