import pg from 'pg';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/schema.ts';
import { openStore, type Store } from '../../src/db/store.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';

// PostgreSQL's connections per process; the embedded store opens files, not connections.
describe.skipIf(testEngine !== 'postgres')('PostgreSQL connections of one process', () => {
  let location: TestStoreLocation;
  let store: Store;
  let admin: pg.Client;

  beforeAll(async () => {
    location = await createTestStoreLocation();
    store = openStore({ dataDir: location.dataDir, databaseUrl: location.databaseUrl });
    admin = new pg.Client({ connectionString: location.databaseUrl });
    await admin.connect();
  });
  afterAll(async () => {
    await store?.close();
    await admin?.end();
    await location?.drop();
  });

  /** The most backends of this database seen running `marker` at once while `queries` ran. */
  async function peakBackends(pool: Kysely<Database>, marker: string, queries: number): Promise<number> {
    let done = false;
    const running = Promise.all(
      Array.from({ length: queries }, () => sql.raw(`select pg_sleep(0.1) /* ${marker} */`).execute(pool)),
    ).finally(() => (done = true));
    let peak = 0;
    while (!done) {
      const { rows } = await admin.query<{ n: number }>(
        'select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and query like $1',
        [`%${marker}%`],
      );
      peak = Math.max(peak, rows[0]!.n);
    }
    await running;
    return peak;
  }

  it('ten searches at once share 4 connections and ten rule runs 2, so serve, worker and an ingest stay far below max_connections', async () => {
    expect(await peakBackends(store.reader, 'search-pool-marker', 10)).toBe(4);
    expect(await peakBackends(store.ruleRuns, 'rule-pool-marker', 10)).toBe(2);
  });
});
