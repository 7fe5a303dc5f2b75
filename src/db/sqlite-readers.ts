import { Worker } from 'node:worker_threads';
import { Kysely, SqliteDialect, type CompiledQuery, type DatabaseConnection, type Driver, type QueryResult } from 'kysely';
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

function startReader(file: string) {
  const worker = new Worker(WORKER_URL, {
    workerData: { file, driver: SQLITE_DRIVER, busyTimeoutMs: 10_000, cacheSizeKib: -32_768 },
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
    if (message.error) waiter.reject(Object.assign(new Error(message.error.message) as ReaderError, { code: message.error.code }));
    else waiter.resolve(message.rows!);
  });
  worker.on('error', failAll);
  worker.on('exit', (code) => failAll(new Error(`SQLite reader thread exited (code ${code})`)));
  return {
    run(sql: string, parameters: readonly unknown[]): Promise<unknown[]> {
      if (failure) return Promise.reject(failure);
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        worker.postMessage({ id, sql, parameters });
      });
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
