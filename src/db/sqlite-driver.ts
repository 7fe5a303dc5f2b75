import type SqliteDatabase from 'better-sqlite3';
import { CompiledQuery, SqliteDialect, type DatabaseConnection, type Driver, type QueryResult } from 'kysely';

/** Statements kept prepared per connection; dynamic SQL (IN lists) beyond this is evicted. */
const STATEMENT_CACHE_SIZE = 500;
/** How long a statement waits for another process's write lock before it fails (DRAGNET_SQLITE_BUSY_TIMEOUT_MS). */
const DEFAULT_BUSY_TIMEOUT_MS = 10_000;
const BUSY_RETRY_MS = 3;
/**
 * A transaction that held the write lock this long leaves it free for a tenth of that time
 * (at most MAX_TURN_MS) before this connection starts another, so that another process's
 * writers, retrying every BUSY_RETRY_MS, get their turn between an ingest's batches.
 */
const LONG_TRANSACTION_MS = 20;
const MAX_TURN_MS = 20;

/**
 * The one connection's turn: callers queue in order and are woken one at a time; Kysely's own
 * driver wakes every waiter on each release, which under ten concurrent requests cost more
 * than the queries themselves.
 */
class ConnectionLock {
  private held = false;
  private readonly waiting: (() => void)[] = [];

  async acquire(): Promise<void> {
    if (this.held) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.held = true;
  }

  release(): void {
    // Handed straight to the next waiter, so no newcomer can overtake it.
    const next = this.waiting.shift();
    if (next) next();
    else this.held = false;
  }
}

/**
 * Kysely's own SQLite driver prepares every statement again on each call, which for the short
 * reads of a request (the user behind a token, a rule) costs more than running them. Here the
 * same SQL text gets the same prepared statement back: better-sqlite3 statements are reusable,
 * SQLite re-prepares them itself after a schema change, and nothing in Dragnet iterates a
 * statement lazily, so a statement is never busy when it is handed out again.
 */
export class CachedStatementConnection implements DatabaseConnection {
  private readonly statements = new Map<string, SqliteDatabase.Statement>();
  private readonly dataVersion: SqliteDatabase.Statement;
  private writes = 0;
  private externalVersion: number | undefined;
  /** The last stamp, reused while neither part has moved (the caches compare it twice a request). */
  private stamp: { version: number; writes: number; text: string } | undefined;

  readonly lock = new ConnectionLock();

  constructor(
    private readonly database: SqliteDatabase.Database,
    private readonly busyTimeoutMs = DEFAULT_BUSY_TIMEOUT_MS,
  ) {
    this.dataVersion = database.prepare('pragma data_version').pluck();
  }

  /**
   * Changes whenever the database may have changed since the last call: SQLite's data_version
   * moves when another connection (the CLI, a worker) commits, and our own writes are counted
   * here. Reading data_version takes file-lock system calls, which under load cost more than
   * the rest of a small request, so it is read once per turn of the event loop: requests
   * handled in the same turn arrived together, and none of them can have been sent after a
   * commit that this read missed.
   */
  changeStamp(): string {
    if (this.externalVersion === undefined) {
      this.externalVersion = this.dataVersion.get() as number;
      setImmediate(() => (this.externalVersion = undefined));
    }
    const { externalVersion: version, writes } = this;
    const last = this.stamp;
    if (last?.version === version && last.writes === writes) return last.text;
    this.stamp = { version, writes, text: `${version}:${writes}` };
    return this.stamp.text;
  }

  private statement(text: string): SqliteDatabase.Statement {
    let statement = this.statements.get(text);
    if (statement) {
      // Re-inserted so that the Map's order is least recently used first.
      this.statements.delete(text);
    } else {
      statement = this.database.prepare(text);
      if (this.statements.size >= STATEMENT_CACHE_SIZE) this.statements.delete(this.statements.keys().next().value!);
    }
    this.statements.set(text, statement);
    return statement;
  }

  private run<R>(query: CompiledQuery): QueryResult<R> {
    const statement = this.statement(query.sql);
    const parameters = query.parameters as unknown[];
    // `readonly`, not `reader`: an UPDATE … RETURNING is both a reader and a write.
    if (!statement.readonly) this.writes++;
    if (statement.reader) return { rows: statement.all(parameters) as R[] };
    const { changes, lastInsertRowid } = statement.run(parameters);
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  }

  /**
   * Runs a statement; when another process holds the write lock, waits for it without
   * blocking the thread. SQLite's own busy timeout sleeps inside the call, which in Node stops
   * the event loop, every request with it, for as long as an ingest in another process keeps
   * the lock; and its growing sleeps (up to 100 ms) lose the lock to a writer that commits
   * and begins again at once. Here the statement is tried again every few milliseconds, and
   * outside a transaction the connection goes to other callers meanwhile (their reads need no
   * lock under WAL).
   */
  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const started = Date.now();
    for (;;) {
      try {
        return this.run<R>(query);
      } catch (error) {
        const busy = (error as { code?: string }).code === 'SQLITE_BUSY';
        if (!busy || Date.now() - started > this.busyTimeoutMs) throw error;
      }
      const inTransaction = this.database.inTransaction;
      if (!inTransaction) this.lock.release();
      await new Promise((resolve) => setTimeout(resolve, BUSY_RETRY_MS));
      if (!inTransaction) await this.lock.acquire();
    }
  }

  // eslint-disable-next-line require-yield -- the interface requires it; Dragnet never streams rows.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported on the SQLite store');
  }

  close(): void {
    this.statements.clear();
    this.database.close();
  }
}

/**
 * The process's one better-sqlite3 connection behind Kysely.
 *
 * One caller at a time holds it (its ConnectionLock): a transaction spans awaits, and another
 * request's statement must not land inside it.
 *
 * Transactions start with BEGIN IMMEDIATE: a deferred BEGIN that reads and then writes fails
 * with SQLITE_BUSY at once when another process (the CLI, a second worker) wrote in between,
 * and no waiting can help it; taking the write lock up front makes writers wait their turn.
 */
class BetterSqliteDriver implements Driver {
  private transactionStarted = 0;

  constructor(private readonly connection: CachedStatementConnection) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.connection.lock.acquire();
    return this.connection;
  }

  async releaseConnection(): Promise<void> {
    this.connection.lock.release();
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
    this.transactionStarted = Date.now();
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
    await this.giveOthersTheirTurn();
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
    await this.giveOthersTheirTurn();
  }

  private async giveOthersTheirTurn(): Promise<void> {
    const held = Date.now() - this.transactionStarted;
    if (held >= LONG_TRANSACTION_MS)
      await new Promise((resolve) => setTimeout(resolve, Math.min(MAX_TURN_MS, Math.ceil(held / 10))));
  }

  async destroy(): Promise<void> {
    this.connection.close();
  }
}

/** Kysely's SQLite dialect (query compiler, introspection) on BetterSqliteDriver. */
export class BetterSqliteDialect extends SqliteDialect {
  constructor(private readonly connection: CachedStatementConnection) {
    super({ database: () => Promise.reject(new Error('BetterSqliteDriver opens no connection of its own')) });
  }

  override createDriver(): Driver {
    return new BetterSqliteDriver(this.connection);
  }
}
