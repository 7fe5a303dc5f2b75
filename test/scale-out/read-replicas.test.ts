import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replicaLabel } from '../../src/db/read-replicas.ts';
import { channel, message } from '../support/corpus.ts';
import { getJson, search, type SearchResponseBody } from '../support/messenger-search.ts';
import { startReplicatedServer, type ReplicatedServer, type TestReplica } from '../support/replica.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { createTestStoreLocation, testDatabaseAdminUrl, type TestStoreLocation } from '../support/test-store.ts';
import { scaled, waitFor } from '../support/wait.ts';

/**
 * Read replicas (DRAGNET_DATABASE_READ_URLS, docs/architecture.md "When one PostgreSQL is not
 * enough") against a real streaming standby that this file starts, of a primary of its own
 * (test/support/replica.ts: initdb, pg_basebackup -R, the machine's PostgreSQL binaries):
 * searches, re-reads and exports read there; a search right after an ingest on the primary
 * sees it; a replica whose replay is paused is skipped and reported as lagging; a replica killed
 * in the middle of a search leaves the search to the primary, with the same answer, and is
 * reported down. Run with the PostgreSQL suite (DRAGNET_TEST_DATABASE_URL set), skipped on the
 * embedded store.
 */
interface Readiness {
  status: string;
  replicas?: { replica: string; state: string; lag_bytes: number | null; lag_seconds: number | null }[];
}

describe.skipIf(!testDatabaseAdminUrl)('read replicas (PostgreSQL, a real streaming replica)', () => {
  let server: ReplicatedServer | undefined;
  let replica: TestReplica | undefined;
  let unavailable: string | undefined;
  let location: TestStoreLocation;
  let t: TestApp;
  let token: string;
  let label: string;
  let nextMessageId = 1;

  const ready = async () => (await t.request({ method: 'GET', url: '/readyz' })).json() as Readiness;
  const metrics = async () => (await t.request({ method: 'GET', url: '/metrics' })).body;
  const metric = (text: string, name: string, labels: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
    return line === undefined ? undefined : Number(line.split(' ').pop());
  };
  const readsOn = async (target: string) =>
    metric(await metrics(), 'dragnet_db_reads_total', `target="${target}"`) ?? 0;
  /** Writes `count` messages saying `word` on the primary, as an ingest would. */
  const ingest = async (word: string, count: number) => {
    const messages = Array.from({ length: count }, (_, i) => message(nextMessageId++, `${word} report number ${i}`));
    await t.container.corpus.write([channel('@replica_feed', messages)]);
  };

  beforeAll(async () => {
    const started = await startReplicatedServer();
    if ('unavailable' in started) {
      unavailable = started.unavailable;
      console.warn(`read-replica tests skipped: ${unavailable}`);
      return;
    }
    server = started;
    replica = started.replica;
    // Commits that do not wait for their WAL flush (the rate counters', the search history's)
    // reach the replica only with the WAL writer's next round: every 2 s here instead of 200 ms
    // (a read waits 200 ms for a replica), so that a read waiting for WAL the primary has not
    // flushed yet goes to the primary and cannot go unnoticed.
    const primary = new pg.Client({ connectionString: server.primaryUrl });
    await primary.connect();
    try {
      await primary.query(`alter system set wal_writer_delay = '2s'`);
      await primary.query('select pg_reload_conf()');
    } finally {
      await primary.end();
    }
    location = await createTestStoreLocation({ adminUrl: server.primaryUrl });
    label = replicaLabel(replica!.urlOf(location.databaseUrl!));
    t = await createTestApp({ location, env: { DRAGNET_DATABASE_READ_URLS: replica!.urlOf(location.databaseUrl!) } });
    await t.createUser({ org: 'Replica Org', email: 'r@replica.example' });
    token = (await t.login('r@replica.example')).access;
    await ingest('alpha', 3000);
  }, scaled(300_000));

  afterAll(async () => {
    await t?.close();
    await location?.drop();
    await server?.remove();
  }, scaled(120_000));

  it('reads searches, re-reads and exports on the replica, and answers as the primary would', async (context) => {
    if (unavailable) return context.skip();
    const before = await readsOn(label);
    const first = await search(t, token, { query: 'alpha', page_size: 50 });
    expect(first.total).toBe(3000);
    expect(await readsOn(label)).toBeGreaterThan(before);
    const reread = await getJson<{ results: { message_id: number }[]; total: number }>(
      t,
      token,
      `/service/messenger-search-history-results/${first.search_history_id}/?page=2&page_size=50`,
    );
    expect(reread.total).toBe(3000);
    expect(reread.results.map((r) => r.message_id)).toEqual(Array.from({ length: 50 }, (_, i) => 3000 - 50 - i));
    const exported = await t.request({
      method: 'GET',
      url: `/service/messenger-search-history-export/${first.search_history_id}/?format=json`,
      token,
    });
    expect(exported.statusCode).toBe(200);
    // The history row keeps the position the watermark was read at.
    const client = new pg.Client({ connectionString: location.databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ read_lsn: string | null }>(
        'select read_lsn from search_history where id = $1',
        [first.search_history_id],
      );
      expect(rows[0]!.read_lsn).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
    } finally {
      await client.end();
    }
    const readiness = await ready();
    expect(readiness.status).toBe('ready');
    expect(readiness.replicas).toEqual([expect.objectContaining({ replica: label, state: 'up' })]);
    expect(JSON.stringify(readiness)).not.toContain('postgres://');
    expect(metric(await metrics(), 'dragnet_db_replica_up', `replica="${label}"`)).toBe(1);
  });

  it('a search right after an ingest on the primary sees every row of it', async (context) => {
    if (unavailable) return context.skip();
    const before = await readsOn(label);
    for (let round = 1; round <= 5; round++) {
      await ingest(`fresh${round}`, 200 * round);
      const body = await search(t, token, { query: `fresh${round}`, page_size: 10 });
      expect(body.total).toBe(200 * round);
      expect(body.results[0]!.message_id).toBe(nextMessageId - 1);
    }
    // The replica had replayed each ingest within the wait (or, on a loaded machine, the primary
    // answered: the same rows either way); at least some of these searches read there.
    expect(await readsOn(label)).toBeGreaterThan(before);
  });

  it('reads on the replica right after commits that did not wait for their WAL flush', async (context) => {
    if (unavailable) return context.skip();
    // Each search reserves its rate-limit windows (unlogged rate_counters) and records its
    // history (synchronous_commit off) without a flush: a replica cannot have that WAL yet, and
    // a read does not need it. A read that waited for it would wait for the WAL writer's next
    // round (up to 200 ms, the read's whole wait) and mostly go to the primary; a replica on a
    // loaded machine may now and then take longer than the wait to replay what was flushed.
    let onReplica = 0;
    for (let round = 0; round < 5; round++) {
      const before = await readsOn(label);
      expect((await search(t, token, { query: 'alpha', page_size: 10 })).total).toBe(3000);
      if ((await readsOn(label)) > before) onReplica++;
    }
    expect(onReplica).toBeGreaterThanOrEqual(4);
    expect((await ready()).replicas![0]!.state).toBe('up');
  });

  it('reads on the replica when the primary flushed its WAL up to a page boundary inside a record', async (context) => {
    if (unavailable) return context.skip();
    // Commits that do not wait for their flush, of rows of about 2 KB, until one crosses a WAL
    // page: the WAL writer, woken by the full page, flushes up to its end and leaves the rest of
    // the record for its next round (2 s here). A read that waited for the flushed position
    // would wait for that rest in vain and go to the primary. Three times: other writes of the
    // primary (autovacuum's, a checkpoint's) may flush the rest first now and then.
    const client = new pg.Client({ connectionString: location.databaseUrl });
    await client.connect();
    try {
      await client.query('set synchronous_commit = off');
      await client.query('create table if not exists wal_filler (body text)');
      const flushCutsRecord = async () => {
        const { rows } = await client.query<{ cut: boolean }>(
          `select pg_current_wal_flush_lsn() < pg_current_wal_insert_lsn()
             and (pg_current_wal_flush_lsn() - '0/0'::pg_lsn) % current_setting('wal_block_size')::int = 0 as cut`,
        );
        if (rows[0]!.cut) return true;
        await client.query(
          `insert into wal_filler select string_agg(md5(random()::text), '') from generate_series(1, 60)`,
        );
        return false;
      };
      for (let round = 0; round < 3; round++) {
        await waitFor('a WAL flush that stopped at a page boundary inside a record', flushCutsRecord, { everyMs: 5 });
        const before = { replica: await readsOn(label), primary: await readsOn('primary') };
        expect((await search(t, token, { query: 'alpha', page_size: 10 })).total).toBe(3000);
        expect(await readsOn(label)).toBeGreaterThan(before.replica);
        expect(await readsOn('primary')).toBe(before.primary);
      }
      expect((await ready()).replicas![0]!.state).toBe('up');
    } finally {
      await client.end();
    }
  });

  it('skips a replica whose replay is paused, reports it lagging, and uses it again once it has caught up', async (context) => {
    if (unavailable) return context.skip();
    await replica!.query('select pg_wal_replay_pause()');
    try {
      await ingest('paused', 500);
      const before = await readsOn('primary');
      const body = await search(t, token, { query: 'paused', page_size: 10 });
      expect(body.total).toBe(500);
      expect(await readsOn('primary')).toBeGreaterThan(before);
      const readiness = await ready();
      expect(readiness.status).toBe('ready');
      expect(readiness.replicas![0]!.state).toBe('lagging');
      expect(readiness.replicas![0]!.lag_bytes).toBeGreaterThan(0);
      const text = await metrics();
      expect(metric(text, 'dragnet_db_replica_lag_bytes', `replica="${label}"`)).toBeGreaterThan(0);
      expect(metric(text, 'dragnet_db_replica_lagging', `replica="${label}"`)).toBe(1);
    } finally {
      await replica!.query('select pg_wal_replay_resume()');
    }
    await waitFor('the replica to catch up', async () => (await ready()).replicas![0]!.state === 'up');
    const before = await readsOn(label);
    expect((await search(t, token, { query: 'paused', page_size: 10 })).total).toBe(500);
    expect(await readsOn(label)).toBeGreaterThan(before);
  });

  it('a replica killed in the middle of a search leaves it to the primary: same answer, replica reported down', async (context) => {
    if (unavailable) return context.skip();
    // The search's statements block on the replica behind a lock the primary holds (a hot
    // standby replays ACCESS EXCLUSIVE locks), so the kill lands while one is running there.
    const holder = new pg.Client({ connectionString: location.databaseUrl });
    await holder.connect();
    let pending: Promise<SearchResponseBody> | undefined;
    try {
      await holder.query('begin');
      await holder.query('lock table messages in access exclusive mode');
      // A commit elsewhere flushes the lock's WAL record; the replica replays up to it.
      const flush = new pg.Client({ connectionString: location.databaseUrl });
      await flush.connect();
      let lsn: string;
      try {
        await flush.query('create table if not exists replica_flush (x int)');
        await flush.query('insert into replica_flush values (1)');
        lsn = (await flush.query<{ lsn: string }>('select pg_current_wal_flush_lsn()::text as lsn')).rows[0]!.lsn;
      } finally {
        await flush.end();
      }
      await waitFor('the replica to replay the lock', async () => {
        const [row] = await replica!.query<{ done: boolean }>(
          `select pg_last_wal_replay_lsn() >= '${lsn}'::pg_lsn as done`,
        );
        return row!.done;
      });
      pending = search(t, token, { query: 'alpha', page_size: 20 });
      await waitFor('a search statement waiting on the replica', async () => {
        const rows = await replica!.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity
           where application_name = 'dragnet-search-replica' and wait_event_type = 'Lock'`,
        );
        return rows[0]!.n > 0;
      });
      await replica!.kill();
    } finally {
      await holder.query('rollback');
      await holder.end();
    }
    const body = await pending!;
    expect(body.total).toBe(3000);
    expect(body.results.map((r) => r.message_id)).toEqual(Array.from({ length: 20 }, (_, i) => 3000 - i));
    const readiness = await ready();
    expect(readiness.status).toBe('ready');
    expect(readiness.replicas).toEqual([expect.objectContaining({ replica: label, state: 'down' })]);
    expect(metric(await metrics(), 'dragnet_db_replica_up', `replica="${label}"`)).toBe(0);
    // Searches go on, on the primary, while it is down; it serves again once it is back.
    expect((await search(t, token, { query: 'alpha', page_size: 5 })).total).toBe(3000);
    await replica!.start();
    await waitFor('the replica to be up again', async () => (await ready()).replicas![0]!.state === 'up', {
      timeoutMs: scaled(60_000),
    });
  });
});
