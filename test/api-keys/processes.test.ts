import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_RATE_LIMITS } from '../support/delivery-api.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { waitFor } from '../support/wait.ts';
import { createKey, revokePath } from './support.ts';

/**
 * Two API processes on one store: each keeps the keys it authenticated in memory (db/read-cache.ts),
 * so a revocation made through one must reach the other (SQLite: the store's data version;
 * PostgreSQL: migration 0020_api_keys's change notifications).
 */
describe('an API key revoked through another process', () => {
  let first: TestApp;
  let second: TestApp;
  beforeAll(async () => {
    first = await createTestApp({ env: NO_RATE_LIMITS });
    second = await createTestApp({ env: NO_RATE_LIMITS, location: first.location, clock: first.clock });
  });
  afterAll(async () => {
    await second.close();
    await first.close();
  });

  it('stops working in every process', async () => {
    await first.createUser({ org: 'Acme', email: 'owner@acme.test' });
    const token = (await first.login('owner@acme.test')).access;
    const { id, key } = await createKey(first, token, { name: 'shared' });
    const account = () => second.request({ method: 'GET', url: '/service/account/', token: key });
    // Used twice, so the second process answers from its cache.
    expect((await account()).statusCode).toBe(200);
    expect((await account()).statusCode).toBe(200);
    expect((await first.request({ method: 'POST', url: revokePath(id), token })).statusCode).toBe(200);
    await waitFor('the revocation to reach the other process', async () => (await account()).statusCode === 401);
  });
});
