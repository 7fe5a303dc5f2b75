import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteDatabase } from '../../src/db/sqlite-native.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';
import { waitFor } from '../support/wait.ts';

// SQLite only: its one write lock is what another process (dragnet ingest) can hold for long.
describe.skipIf(testEngine !== 'sqlite')('a request while another process holds the SQLite write lock', () => {
  let t: TestApp;
  const logged: string[] = [];

  beforeAll(async () => {
    t = await createTestApp({ env: { DRAGNET_SQLITE_BUSY_TIMEOUT_MS: '200' }, log: (message) => logged.push(message) });
    await t.createUser({ org: 'Acme', email: 'alice@acme.test' });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('answers 503 service_unavailable with Retry-After past the busy timeout, and serves again once the lock is free', async () => {
    const other = new SqliteDatabase(path.join(t.location.dataDir, 'dragnet.sqlite'));
    try {
      other.exec('begin immediate');
      const busy = await t.request({
        method: 'POST',
        url: '/token/',
        body: { email: 'alice@acme.test', password: 'correct horse battery staple' },
      });
      expect(busy.statusCode).toBe(503);
      expect(busy.headers['retry-after']).toMatch(/^\d+$/);
      expect(busy.json()).toMatchObject({
        code: 'service_unavailable',
        message: expect.stringContaining('busy'),
        request_id: expect.any(String),
      });
      other.exec('commit');
      await t.login('alice@acme.test');
    } finally {
      if (other.inTransaction) other.exec('rollback');
      other.close();
    }
  });

  it('a rate-limit flush that meets the held lock keeps its counts and writes them once the lock is free, without an unhandled rejection', async () => {
    const { access } = await t.login('alice@acme.test');
    const other = new SqliteDatabase(path.join(t.location.dataDir, 'dragnet.sqlite'));
    const stored = () =>
      (other.prepare('select coalesce(sum(count), 0) as n from rate_counters').get() as { n: number }).n;
    // The process's log (the server's JSON log in `dragnet serve`) hears of it, once per streak.
    const failures = () => logged.filter((message) => message.startsWith('rate-limit counters: flush failed'));
    try {
      const before = stored();
      other.exec('begin immediate');
      for (let i = 0; i < 3; i++)
        expect((await t.request({ method: 'GET', url: '/service/get_usage_limits/', token: access })).statusCode).toBe(
          200,
        );
      await waitFor('a failed flush in the log', () => failures().length > 0);
      other.exec('commit');
      // The next flush writes the counts the failed one kept (3 requests, each counted in every window of the org).
      await waitFor('the kept counts in rate_counters', () => stored() >= before + 3);
      expect(failures()).toEqual(['rate-limit counters: flush failed, kept for the next one']);
    } finally {
      if (other.inTransaction) other.exec('rollback');
      other.close();
    }
  });
});
