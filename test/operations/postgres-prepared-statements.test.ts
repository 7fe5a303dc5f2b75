import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancellable } from '../../src/db/cancellation.ts';
import { prepared, PREPARED_PER_CONNECTION } from '../../src/db/prepared-statements.ts';
import type { Database } from '../../src/db/schema.ts';
import { openStore, type Store } from '../../src/db/store.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';

/** The named statements of the connection `db` runs on, with how often each ran. */
async function preparedHere(db: Kysely<Database>) {
  const { rows } = await sql<{ statement: string; runs: number }>`
    select statement, (generic_plans + custom_plans)::int as runs from pg_prepared_statements
    where not from_sql order by statement`.execute(db);
  return rows;
}

// Named prepared statements are PostgreSQL's; the embedded store caches its statements anyway.
describe.skipIf(testEngine !== 'postgres')('PostgreSQL prepared statements', () => {
  let location: TestStoreLocation;
  let store: Store;
  let unprepared: Store;

  beforeAll(async () => {
    location = await createTestStoreLocation();
    store = openStore({ dataDir: location.dataDir, databaseUrl: location.databaseUrl });
    unprepared = openStore({ dataDir: location.dataDir, databaseUrl: location.databaseUrl, preparedStatements: false });
  });
  afterAll(async () => {
    await store?.close();
    await unprepared?.close();
    await location?.drop();
  });

  const marked = (n: number) => prepared(sql<{ n: number }>`select ${sql.raw(String(n))} + ${1}::int as n`);

  it('parses a marked statement once per connection and runs it again by name', async () => {
    await store.reader.connection().execute(async (db) => {
      expect((await marked(1).execute(db)).rows).toEqual([{ n: 2 }]);
      expect((await marked(1).execute(db)).rows).toEqual([{ n: 2 }]);
      await sql`select 1 + ${1}::int as unmarked`.execute(db);
      expect(await preparedHere(db)).toEqual([{ statement: '/* prepared */ select 1 + $1::int as n', runs: 2 }]);
    });
  });

  it(`keeps at most ${PREPARED_PER_CONNECTION} statements a connection and runs the next ones unnamed`, async () => {
    await store.reader.connection().execute(async (db) => {
      for (let n = 0; n <= PREPARED_PER_CONNECTION; n++)
        expect((await marked(n).execute(db)).rows).toEqual([{ n: n + 1 }]);
      expect((await marked(PREPARED_PER_CONNECTION).execute(db)).rows).toEqual([{ n: PREPARED_PER_CONNECTION + 1 }]);
      expect(await preparedHere(db)).toHaveLength(PREPARED_PER_CONNECTION);
    });
  });

  it('cancels a prepared statement whose client went away', async () => {
    const abort = new AbortController();
    const started = Date.now();
    setTimeout(() => abort.abort(), 200);
    await expect(
      cancellable(abort.signal, () => prepared(sql`select pg_sleep(${10})`).execute(store.reader)),
    ).rejects.toMatchObject({ code: 'client_closed_request' });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('prepares nothing when turned off (a pooler in transaction mode)', async () => {
    await unprepared.reader.connection().execute(async (db) => {
      await marked(1).execute(db);
      expect(await preparedHere(db)).toEqual([]);
    });
  });
});
