import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteDatabase } from '../../src/db/sqlite-native.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

// SQLite only: its one write lock is what another process (dragnet ingest) can hold for long.
describe.skipIf(testEngine !== 'sqlite')('a request while another process holds the SQLite write lock', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ env: { DRAGNET_SQLITE_BUSY_TIMEOUT_MS: '200' } });
    await t.createUser({ org: 'Acme', email: 'alice@acme.test' });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('answers 503 service_unavailable with Retry-After past the busy timeout, and serves again once the lock is free', async () => {
    const other = new SqliteDatabase(path.join(t.location.dataDir, 'dragnet.sqlite'));
    try {
      other.exec('begin immediate');
      const busy = await t.request({ method: 'POST', url: '/token/', body: { email: 'alice@acme.test', password: 'correct horse battery staple' } });
      expect(busy.statusCode).toBe(503);
      expect(busy.headers['retry-after']).toMatch(/^\d+$/);
      expect(busy.json()).toMatchObject({ code: 'service_unavailable', message: expect.stringContaining('busy'), request_id: expect.any(String) });
      other.exec('commit');
      await t.login('alice@acme.test');
    } finally {
      if (other.inTransaction) other.exec('rollback');
      other.close();
    }
  });
});
