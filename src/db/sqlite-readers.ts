import { Worker } from 'node:worker_threads';
import {
  Kysely,
  SqliteDialect,
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
} from 'kysely';
import { cancellationSignal, QueryCancelledError } from './cancellation.ts';
import type { Database } from './schema.ts';
import { SQLITE_DRIVER } from './sqlite-native.ts';

/**
 * Read-only SQLite connections in worker threads, behind a Kysely of their own.
 *
 * better-sqlite3 runs a statement on the calling thread, so a search that reads for a second
 * would stall every request of the process for that second, and queue behind (or ahead of)
 * the writer on the process's one connection. Each worker holds its own read-only connection:
 * under WAL, readers see the last commit and never wait for the writer, nor it for them, and
 * the event loop only waits for a message. The workers start on first use.
 */
export interface SqliteReaders {
  db: Kysely<Database>;
  /** How many statements can run at once (one per worker). */
  size: number;
  close(): Promise<void>;
}

interface Pending {
  resolve(rows: unknown[]): void;
  reject(error: Error): void;
}

interface ReaderError extends Error {
  code?: string;
}

const WORKER_URL = new URL('./sqlite-reader.worker.js', import.meta.url);

/**
 * A condition a long read puts on the rows it visits so that it can be interrupted: every 128th
 * row (by its id) calls the reader thread's dragnet_live(), which fails the statement once it
 * has been cancelled. better-sqlite3 has no sqlite3_interrupt, and terminating the thread does
 * not stop a statement running in SQLite's C code. A cheap bit test on the other rows keeps the
 * cost out of the search's row checks. True only on the readers' connections.
 */
export const livenessCheck = (rowId: string) => `(${rowId} & 127 <> 0 or dragnet_live())`;

function startReader(file: string) {
  // The id of the statement to interrupt, read by the thread while the statement runs (see
  // LIVENESS_CHECK): the thread is busy in SQLite and reads no message until it is done.
  const interrupt = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(WORKER_URL, {
    workerData: { file, driver: SQLITE_DRIVER, busyTimeoutMs: 10_000, cacheSizeKib: -32_768, interrupt },
  });
  const pending = new Map<number, Pending>();
  let nextId = 0;
  let failure: Error | null = null;
  const failAll = (error: Error) => {
    failure = error;
    for (const waiter of pending.values()) waiter.reject(error);
    pending.clear();
  };
  worker.on('message', (message: { id: number; rows?: unknown[]; error?: { message: string; code?: string } }) => {
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    if (message.error?.code === 'query_cancelled') waiter.reject(new QueryCancelledError());
    else if (message.error)
      waiter.reject(Object.assign(new Error(message.error.message) as ReaderError, { code: message.error.code }));
    else waiter.resolve(message.rows!);
  });
  worker.on('error', failAll);
  worker.on('exit', (code) => failAll(new Error(`SQLite reader thread exited (code ${code})`)));
  return {
    run(sql: string, parameters: readonly unknown[]): Promise<unknown[]> {
      if (failure) return Promise.reject(failure);
      const signal = cancellationSignal();
      if (signal?.aborted) return Promise.reject(new QueryCancelledError());
      const id = ++nextId;
      const onAbort = () => Atomics.store(interrupt, 0, id);
      signal?.addEventListener('abort', onAbort, { once: true });
      return new Promise<unknown[]>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        worker.postMessage({ id, sql, parameters });
      }).finally(() => signal?.removeEventListener('abort', onAbort));
    },
    async terminate() {
      worker.removeAllListeners('exit');
      await worker.terminate();
    },
  };
}

type Reader = ReturnType<typeof startReader>;

class ReaderConnection implements DatabaseConnection {
  constructor(readonly reader: Reader) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return { rows: (await this.reader.run(query.sql, query.parameters)) as R[] };
  }

  // eslint-disable-next-line require-yield -- the interface requires it; readers return whole results.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported on SQLite readers');
  }
}

/** Hands out idle readers; callers beyond the pool's size wait in order. */
class ReaderPoolDriver implements Driver {
  private readonly idle: ReaderConnection[] = [];
  private readonly all: ReaderConnection[] = [];
  private readonly waiting: ((connection: ReaderConnection) => void)[] = [];

  constructor(
    private readonly file: string,
    private readonly size: number,
  ) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const idle = this.idle.pop();
    if (idle) return idle;
    if (this.all.length < this.size) {
      const connection = new ReaderConnection(startReader(this.file));
      this.all.push(connection);
      return connection;
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const next = this.waiting.shift();
    if (next) next(connection as ReaderConnection);
    else this.idle.push(connection as ReaderConnection);
  }

  async beginTransaction(): Promise<void> {
    throw new Error('SQLite readers run single statements, not transactions');
  }

  async commitTransaction(): Promise<void> {}

  async rollbackTransaction(): Promise<void> {}

  async destroy(): Promise<void> {
    await Promise.all(this.all.map((connection) => connection.reader.terminate()));
  }
}

class ReaderPoolDialect extends SqliteDialect {
  constructor(private readonly driver: ReaderPoolDriver) {
    super({ database: () => Promise.reject(new Error('the reader pool opens its own connections')) });
  }

  override createDriver(): Driver {
    return this.driver;
  }
}

export function createSqliteReaders(file: string, size: number): SqliteReaders {
  const db = new Kysely<Database>({ dialect: new ReaderPoolDialect(new ReaderPoolDriver(file, size)) });
  return { db, size, close: () => db.destroy() };
}
