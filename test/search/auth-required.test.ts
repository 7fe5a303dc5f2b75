import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel, loadCorpus, message } from '../support/corpus.ts';
import { expectError } from '../support/http.ts';
import { search, SEARCH_PATH } from '../support/messenger-search.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';

/** Spec 5 and 7: every messenger search endpoint needs a valid bearer token, checked before anything else. */
describe('messenger search endpoints require authentication', () => {
  let t: TestApp;
  let historyId: number;

  beforeAll(async () => {
    t = await createTestApp();
    await t.createUser({ org: 'Acme', email: 'analyst@acme.test' });
    await loadCorpus(t, [channel('alpha', [message(1, 'secret material')])]);
    const { access } = await t.login('analyst@acme.test');
    historyId = (await search(t, access, { query: 'secret' })).search_history_id;
  });
  afterAll(() => t.close());

  const endpoints = (): [string, string, unknown][] => [
    ['POST', SEARCH_PATH, { query: 'secret' }],
    ['POST', SEARCH_PATH, { query: '(', bogus: true }],
    ['GET', '/service/messenger-channels/', undefined],
    ['GET', '/service/messenger-channels/?page_size=0', undefined],
    ['GET', '/service/messenger-channels-categories/', undefined],
    ['GET', '/service/messenger-search-history/', undefined],
    ['GET', `/service/messenger-search-history-results/${historyId}/`, undefined],
    ['GET', `/service/messenger-search-history-export/${historyId}/`, undefined],
    ['GET', `/service/messenger-search-history-export/${historyId}/?format=pdf`, undefined],
    ['GET', '/service/messenger-search-history-export/999999/?format=nope', undefined],
  ];

  it('no token is 401, before validation and lookups', async () => {
    for (const [method, url, body] of endpoints()) {
      const error = expectError(await t.request({ method, url, body }), 401, 'unauthorized');
      expect(JSON.stringify(error)).not.toContain('secret material');
    }
  });

  it('a malformed or forged token is 401', async () => {
    for (const [method, url, body] of endpoints()) {
      expectError(await t.request({ method, url, body, headers: { authorization: 'Token abc' } }), 401);
      expectError(
        await t.request({ method, url, body, token: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl' }),
        401,
      );
    }
  });
});
