import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MigrationContext } from '../../src/db/migration-helpers.ts';
import { up as buildWordIndex } from '../../src/modules/sources/messenger/migrations/0009_word_index.ts';
import { up as indexChannelWords } from '../../src/modules/sources/messenger/migrations/0011_channel_word_index.ts';
import { foldText, matchesFolded, parseQuery } from '../../src/modules/sources/common/query/query-language.ts';
import { channel, loadCorpus, message } from '../support/corpus.ts';
import { search } from '../support/messenger-search.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

/**
 * PostgreSQL counts and narrows searches with its word index (migration messenger/0009; the
 * messages' trigram index is gone, 0010): a term inside a longer word, a word longer than the
 * lexicon keeps, letters with combining marks, terms with punctuation inside or made of it,
 * short terms, terms in more words than a count reads through the index, AND/OR/NOT, a channel
 * filter, and messages written before the index existed (the migration indexes them) must all
 * count exactly what the text holds.
 */
const texts = [
  'password reset for admin',
  'mypasswords123 leaked',
  `token ${'x'.repeat(70)}password${'y'.repeat(10)} here`,
  `${'z'.repeat(80)} fresh logs only`,
  'Café crème, PASSWORD ici',
  'cafe\u0301 decomposed password',
  'nothing here at all',
  'pass word split apart',
  'логи и пароли: password',
  'alert!!! 10.2.3.4 down, see crème-brûlée.example',
  // More words holding `kq` than a count reads through the index: checked against the text.
  Array.from({ length: 40 }, (_, i) => `kq${i}`).join(' '),
];

const OTHER_CHANNEL = 'password in the other channel';

const queries: [string, number][] = [
  ['password', 6],
  ['passwords', 1],
  ['assword', 6],
  ['password -leaked', 5],
  ['password AND logs', 0],
  ['logs OR leaked', 2],
  ['café', 1],
  ['cafe', 1],
  ['логи', 1],
  ['xxxpassword', 1],
  ['nothingatall', 0],
  // Terms with punctuation inside (a chain of word pieces), none, or short ones.
  ['"pass word"', 1],
  ['crème,', 1],
  ['0.2.3', 1],
  ['.2.', 1],
  ['"!!!"', 1],
  ['"!!!" OR пароли:', 2],
  ['brûlée.ex', 1],
  ['e-br', 1],
  ['password -"e, p"', 5],
  ['ici', 1],
  ['pa', 7],
  ['kq', 1],
  ['kq3', 1],
  ['kq OR логи', 2],
  ['kq -kq39', 0],
];

describe.skipIf(testEngine !== 'postgres')('the word index counts exactly (postgres)', () => {
  let t: TestApp;
  let token: string;
  let channelIds: number[];

  beforeAll(async () => {
    t = await createTestApp({ env: { DRAGNET_RATE_LIMITS: 'off' } });
    await t.createUser({ org: 'Acme', email: 'analyst@acme.test' });
    token = (await t.login('analyst@acme.test')).access;
    await loadCorpus(t, [
      channel(
        'words_a',
        texts.map((text, i) => message(i + 1, text)),
      ),
      channel('words_b', [message(1, OTHER_CHANNEL)]),
    ]);
    const rows = await t.container.store.db.selectFrom('channels').select('id').orderBy('id').execute();
    channelIds = rows.map((row) => Number(row.id));
  });
  afterAll(() => t?.close());

  const total = async (query: string, channel_ids?: number[]) =>
    (await search(t, token, { query, ...(channel_ids ? { channel_ids } : {}) })).total;

  it.each(queries)('%s', async (query, inChannelA) => {
    const inB = matchesFolded(parseQuery(query).tree, foldText(OTHER_CHANNEL)) ? 1 : 0;
    expect(await total(query)).toBe(inChannelA + inB);
    expect(await total(query, [channelIds[0]!])).toBe(inChannelA);
  });

  it('leaves no trigram index on message text for ingest to maintain', async () => {
    const { rows } = await sql<{ indexname: string }>`
      select indexname from pg_indexes where indexdef like '%gin_trgm_ops%' and tablename like 'messages%'`.execute(
      t.container.store.db,
    );
    expect(rows).toEqual([]);
  });

  it('indexes the messages a store held before the index existed', async () => {
    const db = t.container.store.db as unknown as Kysely<unknown>;
    await sql`drop table message_words`.execute(db);
    await sql`drop table message_lexicon`.execute(db);
    await buildWordIndex(db, { engine: 'postgres' } as MigrationContext);
    for (const [query, inChannelA] of queries) expect(await total(query, [channelIds[0]!]), query).toBe(inChannelA);
    // The upgrade after it: the channel joins the words' GIN index, built over the rows stored.
    await indexChannelWords(db, { engine: 'postgres' } as MigrationContext);
    const { rows: indexes } = await sql<{ indexname: string }>`
      select indexname from pg_indexes where tablename = 'message_words' order by indexname`.execute(db);
    expect(indexes.map((row) => row.indexname)).toEqual([
      'message_words_channel_idx',
      'message_words_channel_words_idx',
      'message_words_pkey',
    ]);
    for (const [query, inChannelA] of queries) expect(await total(query, [channelIds[0]!]), query).toBe(inChannelA);
    await loadCorpus(t, [channel('words_a', [message(100, 'a new password after the upgrade')])]);
    expect(await total('password', [channelIds[0]!])).toBe(7);
  });
});
