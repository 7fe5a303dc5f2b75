import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel, loadCorpus, message } from '../support/corpus.ts';
import { search } from '../support/messenger-search.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';

/**
 * The "more than 10,000 matches" warning, at its boundary: exactly 10,000 matches earn none,
 * one more message earns it. Tiny messages keep the corpus quick to write on both engines.
 */
const THRESHOLD = 10_000;

describe('broad-query warning for many matches', () => {
  let t: TestApp;
  let token: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { DRAGNET_RATE_LIMITS: 'off' } });
    await t.createUser({ org: 'Acme', email: 'analyst@acme.test' });
    token = (await t.login('analyst@acme.test')).access;
    const messages = Array.from({ length: THRESHOLD }, (_, i) => message(i + 1, `bulkhit ${i + 1}`));
    await loadCorpus(t, [channel('bulk', messages), channel('other', [message(1, 'unrelated text')])]);
  });
  afterAll(() => t.close());

  it('exactly 10,000 matches: no warning, and the totals count them all', async () => {
    const body = await search(t, token, { query: 'bulkhit', page_size: 100 });
    expect(body).toMatchObject({ total: THRESHOLD, channels_matched: 1, total_pages: 100, warning: null });
    expect(body.results).toHaveLength(100);
    expect(body.results[0]!.message_id).toBe(THRESHOLD);
  });

  it('10,001 matches: a warning naming the count', async () => {
    await loadCorpus(t, [channel('bulk', [message(THRESHOLD + 1, `bulkhit ${THRESHOLD + 1}`)])]);
    const body = await search(t, token, { query: 'bulkhit', page: 101, page_size: 100 });
    expect(body.total).toBe(THRESHOLD + 1);
    expect(body.total_pages).toBe(101);
    expect(body.results.map((r) => r.message_id)).toEqual([1]);
    expect(body.warning).toMatch(/broad/i);
    expect(body.warning).toContain('10001');
  });

  it('the warning follows the match count, not the corpus size', async () => {
    const body = await search(t, token, { query: '"bulkhit 10001"' });
    expect(body.total).toBe(1);
    expect(body.warning).toBeNull();
  });
});
