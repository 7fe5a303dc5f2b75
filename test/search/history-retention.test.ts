import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS } from '../../src/lib/clock.ts';
import { startScheduler } from '../../src/jobs/scheduler.ts';
import { channel, loadCorpus, message } from '../support/corpus.ts';
import { expectError } from '../support/http.ts';
import { search, type HistoryItemBody, type ListBody } from '../support/messenger-search.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';
import { waitFor } from '../support/wait.ts';

/**
 * Search history housekeeping (docs/api.md, additions to spec 4.2): a user deletes their own
 * searches, and the worker's scheduler removes searches older than the retention.
 */

const HISTORY = '/service/messenger-search-history/';
const entryUrl = (id: number) => `${HISTORY}${id}/`;
const RETENTION_DAYS = 30;

describe(`search history delete and retention (${testEngine})`, () => {
  let t: TestApp;
  let alice: string;
  let carol: string;
  let bob: string;

  beforeAll(async () => {
    t = await createTestApp({
      env: { DRAGNET_RATE_LIMITS: 'off', DRAGNET_SEARCH_HISTORY_RETENTION_DAYS: String(RETENTION_DAYS) },
    });
    await t.createUser({ org: 'Acme', email: 'alice@acme.test' });
    await t.createUser({ org: 'Acme', email: 'carol@acme.test' });
    await t.createUser({ org: 'Globex', email: 'bob@globex.test' });
    await loadCorpus(t, [channel('leaks', [message(1, 'retention check one'), message(2, 'retention check two')])]);
    alice = (await t.login('alice@acme.test')).access;
    carol = (await t.login('carol@acme.test')).access;
    bob = (await t.login('bob@globex.test')).access;
  });
  afterAll(() => t.close());

  const historyIds = async (token: string) => {
    const response = await t.request({ method: 'GET', url: `${HISTORY}?page_size=100`, token });
    expect(response.statusCode).toBe(200);
    return (response.json() as ListBody<HistoryItemBody>).items.map((item) => item.id);
  };

  it("deletes one's own entry: 204, then gone from the list, its results and its export", async () => {
    const id = (await search(t, alice, { query: 'retention' })).search_history_id;
    expect(await historyIds(alice)).toContain(id);
    const deleted = await t.request({ method: 'DELETE', url: entryUrl(id), token: alice });
    expect(deleted.statusCode).toBe(204);
    expect(deleted.body).toBe('');
    expect(await historyIds(alice)).not.toContain(id);
    expectError(
      await t.request({ method: 'GET', url: `/service/messenger-search-history-results/${id}/`, token: alice }),
      404,
      'not_found',
    );
    expectError(
      await t.request({ method: 'GET', url: `/service/messenger-search-history-export/${id}/`, token: alice }),
      404,
      'not_found',
    );
    expectError(await t.request({ method: 'DELETE', url: entryUrl(id), token: alice }), 404, 'not_found');
  });

  it("answers 404 for another organization's entry and for a colleague's, and leaves them in place", async () => {
    const id = (await search(t, alice, { query: 'check' })).search_history_id;
    expectError(await t.request({ method: 'DELETE', url: entryUrl(id), token: bob }), 404, 'not_found');
    expectError(await t.request({ method: 'DELETE', url: entryUrl(id), token: carol }), 404, 'not_found');
    expect(await historyIds(alice)).toContain(id);
    expect(await historyIds(carol)).toContain(id);
    // The list is the organization's; `mine` tells each user which entries they may delete.
    const mine = async (token: string) => {
      const response = await t.request({ method: 'GET', url: `${HISTORY}?page_size=100`, token });
      return (response.json() as ListBody<HistoryItemBody & { mine: boolean }>).items.find((item) => item.id === id)
        ?.mine;
    };
    expect(await mine(alice)).toBe(true);
    expect(await mine(carol)).toBe(false);
  });

  it('names the id when it is not one', async () => {
    const error = expectError(
      await t.request({ method: 'DELETE', url: entryUrl(0), token: alice }),
      400,
      'validation_failed',
    );
    expect(error.fields?.map((f) => f.field)).toEqual(['history_id']);
    expectError(await t.request({ method: 'DELETE', url: entryUrl(1) }), 401);
  });

  it("removes searches past the retention in the worker's scheduler, and keeps the newer ones", async () => {
    const old = (await search(t, alice, { query: 'one' })).search_history_id;
    // Access tokens expire long before: each step logs in again.
    t.clock.advance((RETENTION_DAYS - 1) * DAY_MS);
    const recent = (await search(t, (await t.login('carol@acme.test')).access, { query: 'two' })).search_history_id;
    t.clock.advance(2 * DAY_MS);
    alice = (await t.login('alice@acme.test')).access;

    const scheduler = startScheduler(t.container, { pollMs: 20, log: () => undefined });
    try {
      await waitFor('the old search to be pruned', async () => !(await historyIds(alice)).includes(old));
    } finally {
      await scheduler.stop();
    }
    expect(await historyIds(alice)).toContain(recent);
    expectError(
      await t.request({ method: 'GET', url: `/service/messenger-search-history-results/${old}/`, token: alice }),
      404,
      'not_found',
    );
  });
});
