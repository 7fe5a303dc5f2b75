import { mkdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type pg from 'pg';
import { cancelStatementsOnAbort } from './cancellation.ts';
import { createChangeFeed, type WatchedTable } from './change-feed.ts';
import { lendConnections } from './pg-copy.ts';
import { loadPg } from './pg.ts';
import { prepareMarkedStatements } from './prepared-statements.ts';
import { createReadReplicas, noReplicas, type ReadRouter, type ReplicaOptions } from './read-replicas.ts';
import type { Database } from './schema.ts';
import { BetterSqliteDialect, CachedStatementConnection } from './sqlite-driver.ts';
import { SqliteDatabase } from './sqlite-native.ts';
import { createSqliteReaders } from './sqlite-readers.ts';

export type Engine = 'sqlite' | 'postgres';

export interface Store {
  engine: Engine;
  db: Kysely<Database>;
  /**
   * Where long reads go (searches, exports): connections of their own that hold up neither the
   * event loop nor the writer. SQLite: read-only connections in worker threads
   * (src/db/sqlite-readers.ts); PostgreSQL: the same pool as `db`, whose every query already
   * has a connection and a server process of its own. No transactions.
   */
  reader: Kysely<Database>;
  /**
   * Where a rule run's matching queries go. PostgreSQL: connections of their own whose
   * statement_timeout is a rule run's (`reader`'s is a search's), so that one broad rule cannot
   * keep a server process busy for minutes; SQLite: `db`.
   */
  ruleRuns: Kysely<Database>;
  /**
   * Which server `reader`'s statements run on: PostgreSQL with DRAGNET_DATABASE_READ_URLS, a
   * replica inside `reads.fresh`/`reads.at` (src/db/read-replicas.ts); else the primary.
   */
  reads: ReadRouter;
  /** How many statements `reader` runs at once: a long read may be split into that many parts. */
  readerSlots: number;
  /**
   * Where searches are recorded. SQLite: a database file of its own beside the store
   * (search-history.sqlite, migration messenger/0004), with its own connection and write lock, because
   * SQLite has one writer at a time and an ingest keeps the store's lock busy, batch after
   * batch: a search would wait for its turn to record its history row. PostgreSQL: the primary,
   * through a pool of its own whose commits do not wait for their WAL flush.
   */
  searchHistory: Kysely<Database>;
  /** Human-readable location for start-up messages (never includes credentials). */
  location: string;
  ping(): Promise<void>;
  /**
   * A value that changes whenever `table` may have changed since it was last read, so a row
   * read earlier can be reused while it stays the same (src/db/read-cache.ts). SQLite: any
   * change to the store moves it (data_version and this process's writes); PostgreSQL: the
   * table's change notifications and this process's commits (db/change-feed.ts), null while
   * the notifications are not being received.
   */
  changeStamp(table: WatchedTable): string | null;
  close(): Promise<void>;
}

export interface StoreOptions {
  dataDir: string;
  databaseUrl?: string;
  /**
   * Upper bound of pooled PostgreSQL connections per process for `db`; `reader` gets 40% of it,
   * `ruleRuns` and `searchHistory` 20% each (4, 2 and 2 of the default 10), so that a process
   * holds about 19 connections with the change feed's, and serve, worker and a CLI ingest stay
   * far below max_connections.
   */
  poolSize?: number;
  /** SQLite: how long a write waits for another process's write lock before it fails. */
  busyTimeoutMs?: number;
  /** PostgreSQL: statement_timeout of `reader` (searches) and of `ruleRuns`; none when absent. */
  searchTimeoutMs?: number;
  ruleRunTimeoutMs?: number;
  /** PostgreSQL: streaming standbys of `databaseUrl` where searches may read (DRAGNET_DATABASE_READ_URLS). */
  readUrls?: string[];
  replicas?: ReplicaOptions;
  /**
   * PostgreSQL: run the statements marked `prepared` as named prepared statements (true by
   * default); off behind a pooler in transaction mode that does not keep them
   * (DRAGNET_PG_PREPARED=off, src/db/prepared-statements.ts).
   */
  preparedStatements?: boolean;
}

// PostgreSQL returns BIGINT (int8) and NUMERIC as strings; our ids, counts and epoch-ms
// timestamps all fit in a double, so parse them where the pool is made, not globally.
const toNumber = (value: string) => Number(value);
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20 || oid === 1700) return toNumber;
    return loadPg().types.getTypeParser(oid, format);
  },
};

/** How long opening a SQLite file may wait for another process's lock (the WAL switch). */
const OPEN_LOCK_TIMEOUT_MS = 60_000;

/** The SQLite file of the search history, beside the store's file. */
export const searchHistoryFile = (storeFile: string) => path.join(path.dirname(storeFile), 'search-history.sqlite');

/**
 * A SQLite connection as Dragnet uses them. WAL lets the CLI write while the server reads.
 * Writers of two processes wait for each other in the driver (sqlite-driver.ts), not in
 * SQLite's busy handler, which would stop the event loop while it waits.
 */
function openSqlite(file: string): BetterSqlite3.Database {
  // Switching a new file to WAL takes its lock once, at open: processes starting together on a
  // fresh store (a scale-out deployment's first start) wait for each other here, inside SQLite
  // (before the event loop serves anything), longer than its 5 s default on a loaded machine.
  const connection = new SqliteDatabase(file, { timeout: OPEN_LOCK_TIMEOUT_MS });
  connection.pragma('journal_mode = WAL');
  connection.pragma('busy_timeout = 0');
  connection.pragma('synchronous = NORMAL');
  return connection;
}

export function openStore(options: StoreOptions): Store {
  if (options.databaseUrl) {
    const databaseUrl = options.databaseUrl;
    const poolSize = options.poolSize ?? 10;
    // application_name: which pool a backend belongs to, in pg_stat_activity.
    const openPool = (name: string, max: number, statementTimeoutMs?: number, url = databaseUrl, settings = '') => {
      const pool = new (loadPg().Pool)({
        connectionString: url,
        application_name: name,
        max,
        // A replica that does not answer is skipped at once rather than waited for.
        ...(url === databaseUrl ? {} : { connectionTimeoutMillis: 2000 }),
        types: pgTypes as pg.CustomTypesConfig,
        // JIT compilation pays off for analytical queries of many seconds; a broad search paid
        // 150 ms for it on every call, and the short queries never gain from it.
        options: `-c jit=off${statementTimeoutMs ? ` -c statement_timeout=${statementTimeoutMs}` : ''}${settings}`,
      });
      // An idle pooled connection that the server closes (a restart, a terminated backend) emits
      // 'error' on the pool; unhandled, that would crash the process. The pool drops the
      // connection and the next query opens a new one or fails visibly (readyz turns 503).
      pool.on('error', () => undefined);
      // A server that goes away while the pool has lent a client out (in the middle of a
      // statement, or between a transaction's statements) ends that client's socket, which pg
      // reports as an 'error' event on the client besides the statement's failure: not a crash.
      // The client's next statement fails ("not queryable", a 503), read-replicas.ts retries a
      // replica's on the primary, and the pool drops the client when it is released.
      pool.on('connect', (client) => client.on('error', () => undefined));
      // Before the cancellation hook, which then wraps the named form too.
      prepareMarkedStatements(pool, options.preparedStatements ?? true);
      cancelStatementsOnAbort(pool);
      return pool;
    };
    const changes = createChangeFeed(databaseUrl);
    const primary = openPool('dragnet', poolSize);
    const db = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: changes.observe(lendConnections(primary)) }),
    });
    // Connections are opened on first use: a command that never searches opens none of these.
    // Searches and rule runs beyond their pool's size wait for a connection rather than open more.
    const readerSize = Math.max(1, Math.round(poolSize * 0.4));
    const sidePoolSize = Math.max(1, Math.round(poolSize * 0.2));
    const searchPool = openPool('dragnet-search', readerSize, options.searchTimeoutMs);
    const replicas = options.readUrls?.length
      ? createReadReplicas({
          urls: options.readUrls,
          primary: searchPool,
          lsnPool: primary,
          openPool: (url, name, max) => openPool(name, max, options.searchTimeoutMs, url),
          poolSize: readerSize,
          options: options.replicas,
        })
      : { router: noReplicas, pool: searchPool };
    const reader = new Kysely<Database>({ dialect: new PostgresDialect({ pool: replicas.pool }) });
    const ruleRuns = new Kysely<Database>({
      dialect: new PostgresDialect({
        pool: openPool('dragnet-rule-runs', sidePoolSize, options.ruleRunTimeoutMs),
      }),
    });
    // The search history commits without waiting for its WAL flush (1 ms on a quiet disk, 10 ms
    // beside an ingest), which a search otherwise waits for after its count: a crash of the
    // server may lose the last moments' entries, never more, as the embedded store's history
    // (synchronous NORMAL) may lose them on a power cut (docs/architecture.md, "Search").
    const history = new Kysely<Database>({
      dialect: new PostgresDialect({
        pool: openPool('dragnet-history', sidePoolSize, undefined, databaseUrl, ' -c synchronous_commit=off'),
      }),
    });
    const url = new URL(databaseUrl);
    return {
      engine: 'postgres',
      db,
      reader,
      reads: replicas.router,
      ruleRuns,
      // PostgreSQL splits a long read over its own parallel workers.
      readerSlots: 1,
      searchHistory: history,
      location: `postgres://${url.host}${url.pathname}`,
      changeStamp: (table) => changes.stamp(table),
      ping: async () => {
        await sql`select 1`.execute(db);
      },
      close: async () => {
        await changes.close();
        await replicas.router.close();
        await Promise.all([reader.destroy(), ruleRuns.destroy(), history.destroy()]);
        await db.destroy();
      },
    };
  }

  mkdirSync(options.dataDir, { recursive: true });
  const file = path.join(options.dataDir, 'dragnet.sqlite');
  const connection = openSqlite(file);
  connection.pragma('foreign_keys = ON');
  // Large sorts stay in memory instead of temp files.
  connection.pragma('temp_store = MEMORY');
  connection.pragma('cache_size = -65536');
  const cached = new CachedStatementConnection(connection, options.busyTimeoutMs);
  const db = new Kysely<Database>({ dialect: new BetterSqliteDialect(cached) });
  const history = new Kysely<Database>({
    dialect: new BetterSqliteDialect(
      new CachedStatementConnection(openSqlite(searchHistoryFile(file)), options.busyTimeoutMs),
    ),
  });
  // One reader per core (two at least, so a long search never keeps a short one waiting alone).
  const readers = createSqliteReaders(file, Math.min(4, Math.max(2, availableParallelism())));
  return {
    engine: 'sqlite',
    db,
    reader: readers.db,
    reads: noReplicas,
    ruleRuns: db,
    readerSlots: readers.size,
    searchHistory: history,
    location: file,
    changeStamp: () => cached.changeStamp(),
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: async () => {
      await readers.close();
      await history.destroy();
      await db.destroy();
    },
  };
}
