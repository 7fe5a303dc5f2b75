import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';
import { waitFor } from '../support/wait.ts';

// The ANALYZE after a large ingest is PostgreSQL's (db/maintenance.ts); SQLite runs none. A
// trigger, to make the channels' recount fail, is PostgreSQL's too.
describe.skipIf(testEngine !== 'postgres')(
  'PostgreSQL: the upkeep after an ingest (ANALYZE, channel counts) neither delays nor decides its answer',
  () => {
    let t: TestApp;
    let admin: pg.Client;
    let locker: pg.Client;
    let system: string;
    const logged: string[] = [];

    beforeAll(async () => {
      t = await createTestApp({
        log: (message, error) => logged.push(`${message}: ${error instanceof Error ? error.message : String(error)}`),
      });
      await t.createUser({ org: 'Operators', email: 'ops@analyze.test', role: 'system' });
      system = (await t.login('ops@analyze.test')).access;
      admin = new pg.Client({ connectionString: t.location.databaseUrl });
      locker = new pg.Client({ connectionString: t.location.databaseUrl });
      await Promise.all([admin.connect(), locker.connect()]);
    });
    afterAll(async () => {
      await locker?.end();
      await admin?.end();
      await t?.close();
    });

    it('answers 200 while the ANALYZE waits for a lock, and an ANALYZE that then fails is logged, not a 500', async () => {
      // Extended statistics whose expression divides by zero: only ANALYZE evaluates it, and fails.
      await admin.query(
        'create statistics leak_credentials_broken on ((1 / (length(login) - length(login)))) from leak_credentials',
      );
      // ANALYZE needs SHARE UPDATE EXCLUSIVE, which this holds; the ingest's inserts do not.
      await locker.query('begin');
      await locker.query('lock table leak_credentials in share update exclusive mode');

      const body = Array.from({ length: 1500 }, (_, i) => `user${i}@analyze-http.test:password-${i}`).join('\n') + '\n';
      const response = await t.app.inject({
        method: 'POST',
        url: '/ingest/filtered_leak/?name=combo.txt',
        payload: body,
        headers: { authorization: `Bearer ${system}`, 'content-type': 'text/plain' },
      });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json()).toMatchObject({ accepted: 1500 });
      expect(logged).toEqual([]);

      await locker.query('commit');
      await waitFor('the ANALYZE failure in the log', () => logged.length > 0);
      expect(logged).toEqual(['ANALYZE after an ingest failed: division by zero']);
      const stored = await admin.query<{ n: number }>(
        "select count(*)::int as n from leak_credentials where login like '%@analyze-http.test'",
      );
      expect(stored.rows[0]!.n).toBe(1500);
    });

    it('a messenger ingest whose channel recount fails answers 200 with what it stored, and the failure is logged', async () => {
      logged.length = 0;
      await admin.query(
        `create function refuse_recount() returns trigger language plpgsql as $$ begin raise exception 'recount refused'; end $$`,
      );
      await admin.query(
        'create trigger refuse_recount before update of total_messages_scraped on channels for each row execute function refuse_recount()',
      );
      const line = (id: number) =>
        JSON.stringify({
          channel: { platform: 'telegram', id: '-100888', username: 'recount', title: 'Recount' },
          message_id: id,
          date: '2026-03-10T08:00:00Z',
          text: `line ${id}`,
        });
      const response = await t.app.inject({
        method: 'POST',
        url: '/ingest/messenger/?format=jsonl',
        payload: [line(1), line(2)].join('\n'),
        headers: { authorization: `Bearer ${system}`, 'content-type': 'application/x-ndjson' },
      });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json()).toMatchObject({ accepted: 2 });
      expect(logged).toEqual(["messenger: the channels' message counts were not refreshed: recount refused"]);
    });
  },
);
