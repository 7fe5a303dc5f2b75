import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { isConnectionFailure } from './pg.ts';

/**
 * PostgreSQL read replicas (DRAGNET_DATABASE_READ_URLS, docs/architecture.md "When one
 * PostgreSQL is not enough"). Searches, re-reads, exports, quick searches and match reads run
 * inside `fresh` or `at`, which pin them to a streaming standby that has replayed far enough,
 * or to the primary when none has. Everything else, and whatever runs outside those, reads on
 * the primary. A statement that fails on a replica because the replica went away (or replay
 * cancelled it) runs again on the primary: a replica's failure never fails a request.
 *
 * Exactness: a search records the WAL position its watermark was read at (`position`); a
 * re-read or an export of it runs on a replica only once that replica has replayed past it
 * (`pg_last_wal_replay_lsn()`), so its rows at or below the watermark are the ones counted.
 */

/** A WAL position as PostgreSQL prints it (`16/B374D848`). */
export type Lsn = string;

export const parseLsn = (lsn: Lsn): bigint => {
  const [high, low] = lsn.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
};

export interface ReplicaStatus {
  /** host:port/database, never credentials. */
  replica: string;
  /** up: reads may go there; lagging: it did not replay what a read needed in time (skipped until it has); down: it did not answer. */
  state: 'up' | 'lagging' | 'down';
  /** WAL bytes the primary has flushed that the replica has not replayed; null until measured. */
  lagBytes: number | null;
  /** Seconds since the replica last replayed a transaction while it is behind; 0 when caught up. */
  lagSeconds: number | null;
  /** Why it is down (the driver's message, without the URL). */
  lastError: string | null;
}

export interface ReadRouter {
  /** Whether any replica is configured. */
  readonly enabled: boolean;
  /**
   * Runs `work`'s reads (those on Store.reader) on a replica that has replayed everything the
   * primary had written when it started, after a brief wait if need be, or else on the primary.
   */
  fresh<T>(work: () => Promise<T>): Promise<T>;
  /** As `fresh`, on a replica that has replayed `lsn` (null: as `fresh`). */
  at<T>(lsn: Lsn | null, work: () => Promise<T>): Promise<T>;
  /**
   * Inside `fresh`/`at`: a WAL position at or after everything the reads so far have seen, to be
   * recorded with what they read. null when no replica is configured.
   */
  position(): Promise<Lsn | null>;
  /** The replicas as last checked. */
  status(): ReplicaStatus[];
  /** Checks every replica now, then answers as `status`. */
  check(): Promise<ReplicaStatus[]>;
  /** Statements run per target since start: `primary` and each replica's label. */
  reads(): Record<string, number>;
  close(): Promise<void>;
}

export interface ReplicaOptions {
  /** How long a read waits for a replica to replay what it needs before it goes to the primary. */
  waitMs?: number;
  /** How often the replicas are checked (up, replayed position, lag). */
  checkIntervalMs?: number;
}

interface Replica {
  label: string;
  pool: pg.Pool;
  /** A small pool for position checks, so that they never wait behind searches. */
  probe: pg.Pool;
  up: boolean;
  /** The highest replay position seen. */
  replayed: bigint;
  /** Set when a read waited in vain for this position: skipped until it has replayed it. */
  behind: bigint | null;
  lagBytes: number | null;
  lagSeconds: number | null;
  lastError: string | null;
}

interface ReadContext {
  target: Replica | null;
}

const WAIT_POLL_MS = 10;

/** One statement on a connection of `pool` (promise form: the pools' cancellation hook wraps that one). */
async function queryOn<R extends pg.QueryResultRow>(pool: pg.Pool, text: string): Promise<R[]> {
  const client = await pool.connect();
  try {
    const result = await client.query<R>(text);
    client.release();
    return result.rows;
  } catch (error) {
    client.release(error as Error);
    throw error;
  }
}

/** A replica's label in reports: host, port and database of its URL. */
export function replicaLabel(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`;
}

/**
 * An error of the replica rather than of the statement: its connection failed (isConnectionFailure)
 * or replay cancelled the statement (40001 on a standby: "conflict with recovery"). The same
 * statement can run on the primary. A statement_timeout or a cancellation by the client is not retried.
 */
export const isReplicaFailure = (error: unknown): boolean =>
  isConnectionFailure(error) || (error as { code?: unknown } | null)?.code === '40001';

const errorText = (error: unknown) => String((error as { message?: unknown } | null)?.message ?? error).slice(0, 200);

/** The router for a store without replicas: every read on the primary, nothing to record. */
export const noReplicas: ReadRouter = {
  enabled: false,
  fresh: (work) => work(),
  at: (_lsn, work) => work(),
  position: async () => null,
  status: () => [],
  check: async () => [],
  reads: () => ({}),
  close: async () => undefined,
};

interface ReplicaSetDeps {
  urls: string[];
  lsnPool: pg.Pool;
  openPool: (url: string, name: string, max: number) => pg.Pool;
  poolSize: number;
  options?: ReplicaOptions;
}

/** The replicas' pools and what is known of each: checked every second, and asked where they are. */
function createReplicaSet(deps: ReplicaSetDeps) {
  const waitMs = deps.options?.waitMs ?? 200;
  const checkIntervalMs = deps.options?.checkIntervalMs ?? 1000;
  const replicas: Replica[] = deps.urls.map((url) => ({
    label: replicaLabel(url),
    pool: deps.openPool(url, 'dragnet-search-replica', deps.poolSize),
    probe: deps.openPool(url, 'dragnet-replica-check', 2),
    up: true,
    replayed: 0n,
    behind: null,
    lagBytes: null,
    lagSeconds: null,
    lastError: null,
  }));
  let next = 0;
  let timer: NodeJS.Timeout | undefined;
  let checking: Promise<void> | undefined;
  let closed = false;

  const markDown = (replica: Replica, error: unknown) => {
    replica.up = false;
    replica.lastError = errorText(error);
  };
  const usable = (replica: Replica) => replica.up && replica.behind === null;

  /**
   * The primary's flushed WAL position, not its insert position: a standby receives only
   * flushed WAL, and a commit with synchronous_commit on is flushed before its rows are
   * visible. Above it wait only commits that did not wait for their flush:
   * the rate counters' (unlogged, never replicated) and the search history's (read on the
   * primary). A read that waited for them would wait for the WAL writer's next round (200 ms),
   * and give the replica up as behind.
   */
  async function flushedPosition(): Promise<{ position: bigint; pageBytes: bigint }> {
    const rows = await queryOn<{ lsn: string; page: number }>(
      deps.lsnPool,
      `select pg_current_wal_flush_lsn()::text as lsn, current_setting('wal_block_size')::int as page`,
    );
    return { position: parseLsn(rows[0]!.lsn), pageBytes: BigInt(rows[0]!.page) };
  }

  /**
   * What a read needs a replica to have replayed: the flushed position, unless it lies on a WAL
   * page boundary. The WAL writer flushes whole pages, so a flush can stop inside a record that
   * goes on into the next page (an asynchronous commit's), and a standby replays nothing of that
   * record until the rest is flushed: up to the WAL writer's next round, longer than a read
   * waits (docs/performance.md, "Read replicas"). There, a record of our own, committed
   * synchronously, ends past every commit so far and is flushed with its commit.
   */
  async function primaryPosition(): Promise<bigint> {
    const flushed = await flushedPosition();
    if (flushed.position % flushed.pageBytes !== 0n) return flushed.position;
    const rows = await queryOn<{ lsn: string }>(
      deps.lsnPool,
      `select pg_logical_emit_message(true, 'dragnet', 'read position')::text as lsn`,
    );
    return parseLsn(rows[0]!.lsn);
  }

  /** The replica's replayed position now (and its last commit's age); down when it does not answer or is no standby. */
  async function replayed(replica: Replica): Promise<{ position: bigint; since: number | null } | null> {
    try {
      const rows = await queryOn<{ lsn: string | null; since: number | null }>(
        replica.probe,
        `select pg_last_wal_replay_lsn()::text as lsn,
                extract(epoch from now() - pg_last_xact_replay_timestamp())::float8 as since`,
      );
      const lsn = rows[0]?.lsn;
      if (!lsn) throw new Error('not a standby: pg_last_wal_replay_lsn() is null');
      const position = parseLsn(lsn);
      if (position > replica.replayed) replica.replayed = position;
      return { position, since: rows[0]!.since };
    } catch (error) {
      markDown(replica, error);
      return null;
    }
  }

  async function checkNow(): Promise<void> {
    // The primary's own health is /readyz's store check.
    const primary = await flushedPosition().then(
      (flushed) => flushed.position,
      () => null,
    );
    await Promise.all(
      replicas.map(async (replica) => {
        const at = await replayed(replica);
        if (!at) return;
        replica.up = true;
        replica.lastError = null;
        if (replica.behind !== null && replica.replayed >= replica.behind) replica.behind = null;
        if (primary === null) return;
        const lag = primary > at.position ? Number(primary - at.position) : 0;
        replica.lagBytes = lag;
        replica.lagSeconds = lag === 0 ? 0 : at.since === null ? null : Math.max(0, Number(at.since));
      }),
    );
  }

  const check = () => (checking ??= checkNow().finally(() => (checking = undefined)));

  function startChecks() {
    if (timer || closed) return;
    timer = setInterval(() => void check().catch(() => undefined), checkIntervalMs);
    timer.unref();
  }

  /** A replica that has replayed `need` (null: the primary's position now), or null for the primary. */
  async function choose(need: bigint | null): Promise<Replica | null> {
    startChecks();
    const candidates = replicas.filter(usable);
    if (candidates.length === 0) return null;
    const start = next++ % candidates.length;
    const ordered = [...candidates.slice(start), ...candidates.slice(0, start)];
    const position = need ?? (await primaryPosition().catch(() => null));
    if (position === null) return null;
    const known = ordered.find((replica) => replica.replayed >= position);
    if (known) return known;
    const deadline = Date.now() + waitMs;
    for (;;) {
      const answers = await Promise.all(ordered.map(async (replica) => [replica, await replayed(replica)] as const));
      const ready = answers.find(([, at]) => at !== null && at.position >= position);
      if (ready) return ready[0];
      if (Date.now() >= deadline || answers.every(([, at]) => at === null)) break;
      await sleep(WAIT_POLL_MS);
    }
    for (const replica of ordered) if (replica.up) replica.behind = position;
    return null;
  }

  return {
    replicas,
    markDown,
    primaryPosition,
    replayed,
    check,
    startChecks,
    choose,
    async close() {
      closed = true;
      clearInterval(timer);
      await checking;
      await Promise.all(replicas.flatMap((replica) => [replica.pool.end(), replica.probe.end()]));
    },
  };
}

type ReplicaSet = ReturnType<typeof createReplicaSet>;

/**
 * The pool Store.reader runs on: a connection of the replica its read context names, whose
 * statements run again on the primary if the replica fails them; else one of `primary`.
 */
function createRoutedPool(
  set: ReplicaSet,
  primary: pg.Pool,
  context: AsyncLocalStorage<ReadContext>,
  count: (target: string) => void,
): pg.Pool {
  function failoverClient(replica: Replica, client: pg.PoolClient, state: ReadContext): pg.PoolClient {
    let current: pg.PoolClient = client;
    let onReplica = true;
    const send = (target: pg.PoolClient, args: unknown[]) =>
      (target.query as (...a: unknown[]) => Promise<unknown>)(...args);
    const wrapper = {
      query: async (...args: unknown[]) => {
        if (onReplica) {
          try {
            return await send(current, args);
          } catch (error) {
            if (!isReplicaFailure(error)) throw error;
            set.markDown(replica, error);
            state.target = null;
            current.release(error as Error);
            onReplica = false;
            current = await primary.connect();
            count('primary');
          }
        }
        return send(current, args);
      },
      release: (error?: Error | boolean) => current.release(error),
    };
    return wrapper as unknown as pg.PoolClient;
  }

  const routed = {
    async connect(): Promise<pg.PoolClient> {
      const state = context.getStore();
      const replica = state?.target;
      if (state && replica) {
        if (replica.up) {
          try {
            const client = await replica.pool.connect();
            count(replica.label);
            return failoverClient(replica, client, state);
          } catch (error) {
            if (!isReplicaFailure(error)) throw error;
            set.markDown(replica, error);
          }
        }
        state.target = null;
      }
      count('primary');
      return primary.connect();
    },
    async end() {
      await primary.end();
    },
  };
  return routed as unknown as pg.Pool;
}

/**
 * The router and the pool that Store.reader runs on: `primary` is the primary's search pool,
 * `lsnPool` one on the primary whose connections are free for a one-row query,
 * `openPool(url, name, max)` opens a pool on a replica as the primary's are opened.
 */
export function createReadReplicas(deps: ReplicaSetDeps & { primary: pg.Pool }): { router: ReadRouter; pool: pg.Pool } {
  const set = createReplicaSet(deps);
  const context = new AsyncLocalStorage<ReadContext>();
  const counts = new Map<string, number>([['primary', 0], ...set.replicas.map((r): [string, number] => [r.label, 0])]);
  const count = (target: string) => counts.set(target, (counts.get(target) ?? 0) + 1);
  const run = async <T>(need: bigint | null, work: () => Promise<T>): Promise<T> =>
    context.run({ target: await set.choose(need) }, work);

  const router: ReadRouter = {
    enabled: set.replicas.length > 0,
    fresh: (work) => run(null, work),
    at: (lsn, work) => run(lsn ? parseLsn(lsn) : null, work),
    async position() {
      const replica = context.getStore()?.target;
      const at = replica?.up ? await set.replayed(replica) : null;
      return formatLsn(at ? at.position : await set.primaryPosition());
    },
    status: () => {
      set.startChecks();
      return set.replicas.map((replica) => ({
        replica: replica.label,
        state: !replica.up ? 'down' : replica.behind !== null ? 'lagging' : 'up',
        lagBytes: replica.lagBytes,
        lagSeconds: replica.lagSeconds,
        lastError: replica.up ? null : replica.lastError,
      }));
    },
    async check() {
      await set.check();
      return router.status();
    },
    reads: () => Object.fromEntries(counts),
    close: () => set.close(),
  };
  return { router, pool: createRoutedPool(set, deps.primary, context, count) };
}

export const formatLsn = (position: bigint): Lsn =>
  `${(position >> 32n).toString(16).toUpperCase()}/${(position & 0xffffffffn).toString(16).toUpperCase()}`;

/** `queries` with each of its methods run inside `reads.fresh` (read services: quick searches, match reads). */
export function freshReads<T extends object>(reads: ReadRouter, queries: T): T {
  if (!reads.enabled) return queries;
  return Object.fromEntries(
    Object.entries(queries).map(([name, value]) => [
      name,
      typeof value === 'function'
        ? (...args: unknown[]) =>
            reads.fresh(() => (value as (...a: unknown[]) => Promise<unknown>).apply(queries, args))
        : value,
    ]),
  ) as T;
}
