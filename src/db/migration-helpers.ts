import { sql, type CreateTableBuilder, type Kysely } from 'kysely';
import type { KeyRing } from '../lib/crypto.ts';
import type { Engine } from './store.ts';

export interface MigrationContext {
  engine: Engine;
  /** For migrations that re-key stored digests. */
  keys: KeyRing;
}

export interface MigrationModule {
  up(db: Kysely<unknown>, context: MigrationContext): Promise<void>;
}

/**
 * Starts a table with its auto-increment primary key, which differs by engine: SQLite wants
 * INTEGER PRIMARY KEY AUTOINCREMENT (ids never reused), PostgreSQL a bigserial.
 */
export function createTableWithId(
  db: Kysely<unknown>,
  engine: Engine,
  table: string,
): CreateTableBuilder<string, 'id'> {
  const builder = db.schema.createTable(table);
  return engine === 'postgres'
    ? builder.addColumn('id', sql`bigserial`, (c) => c.primaryKey())
    : builder.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}

/**
 * Runs `work`, which overwrites or drops secrets, so that no copy of the old values stays in the
 * store's files. SQLite keeps an overwritten value in the freed space of its page (and a page
 * freed whole on the free list, which its online backup copies) and in the WAL until a
 * checkpoint: secure_delete zeroes freed space while `work` runs, and a truncating checkpoint
 * then folds the WAL into the database and empties it. PostgreSQL keeps old row versions until
 * a VACUUM FULL, which cannot run in a migration's transaction (docs/operations.md "Upgrading").
 */
export async function withoutOldCopies(db: Kysely<unknown>, engine: Engine, work: () => Promise<void>): Promise<void> {
  if (engine !== 'sqlite') return work();
  const before = Number(
    (await sql<{ secure_delete: number }>`pragma secure_delete`.execute(db)).rows[0]?.secure_delete,
  );
  await sql`pragma secure_delete = on`.execute(db);
  try {
    await work();
  } finally {
    await sql.raw(`pragma secure_delete = ${before ? 'on' : 'off'}`).execute(db);
  }
  await sql`pragma wal_checkpoint(truncate)`.execute(db);
}
