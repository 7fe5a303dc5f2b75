import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel, loadCorpus, message, type ChannelItem } from '../support/corpus.ts';
import { getJson, search } from '../support/messenger-search.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

/**
 * Messages dated anywhere, across month and year boundaries, far in the past and the future
 * (PostgreSQL keeps each month in a partition of its own, created by the ingest that first
 * writes it): every one is found, newest first, and a (channel, message id) is stored once
 * whatever its date, in one load, in later loads and across months.
 */
const dated = [
  ['1970-01-01T00:00:00.000Z', 'epoch'],
  ['1999-12-31T23:59:59.999Z', 'last of 1999'],
  ['2000-01-01T00:00:00.000Z', 'first of 2000'],
  ['2026-11-30T23:59:59.999Z', 'last of november'],
  ['2026-12-01T00:00:00.000Z', 'first of december'],
  ['2031-05-17T12:00:00.000Z', 'far ahead'],
] as const;

describe(`messages in every month (${testEngine})`, () => {
  let t: TestApp;
  let token: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { DRAGNET_RATE_LIMITS: 'off' } });
    await t.createUser({ org: 'Acme', email: 'analyst@acme.test' });
    token = (await t.login('analyst@acme.test')).access;
    await loadCorpus(t, [
      channel('calendar', [
        ...dated.map(([date, label], i) => message(i + 1, `ledger ${label}`, { date })),
        // The same message twice in one load: the first stands.
        message(1, 'ledger epoch copy', { date: '2026-06-01T00:00:00Z' }),
      ]),
    ]);
  });
  afterAll(() => t?.close());

  it('finds every message newest first, months and years apart', async () => {
    const body = await search(t, token, { query: 'ledger', page_size: 20 });
    expect(body.total).toBe(dated.length);
    expect(body.results.map((hit) => hit.text_preview)).toEqual(
      [...dated].reverse().map(([, label]) => `ledger ${label}`),
    );
    expect(body.results.map((hit) => hit.date)).toEqual([...dated].reverse().map(([date]) => date));
  });

  it('stores a (channel, message id) once, whatever date a later copy carries', async () => {
    await loadCorpus(t, [
      channel('calendar', [
        message(2, 'ledger last of 1999', { date: '1999-12-31T23:59:59.999Z' }),
        message(3, 'ledger moved to another month', { date: '2027-02-01T00:00:00Z' }),
        message(7, 'ledger new in a new month', { date: '2032-03-15T00:00:00Z' }),
      ]),
      channel('second', [message(1, 'ledger epoch', { date: '1970-01-01T00:00:00Z' })]),
    ]);
    const body = await search(t, token, { query: 'ledger', page_size: 20 });
    expect(body.total).toBe(dated.length + 2);
    expect(body.results.map((hit) => hit.text_preview)).not.toContain('ledger moved to another month');
    expect(body.results[0]).toMatchObject({
      text_preview: 'ledger new in a new month',
      date: '2032-03-15T00:00:00.000Z',
    });

    const channels = await getJson<{ items: ChannelItem[] }>(t, token, '/service/messenger-channels/?page_size=10');
    const sizes = Object.fromEntries(channels.items.map((row) => [row.username, row.total_messages_scraped]));
    expect(sizes).toEqual({ calendar: dated.length + 1, second: 1 });
  });
});
