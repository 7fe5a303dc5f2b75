import { sql, type CreateTableBuilder, type Kysely } from 'kysely';
import type { KeyRing } from '../lib/crypto.ts';
import type { Engine } from './store.ts';

export interface MigrationContext {
  engine: Engine;
  /** The master key's ring, for migrations that seal values already stored (made on first use). */
  keys(): KeyRing;
}

export interface MigrationModule {
  up(db: Kysely<unknown>, context: MigrationContext): Promise<void>;
}

/**
 * Starts a table with its auto-increment primary key, which differs by engine: SQLite wants
 * INTEGER PRIMARY KEY AUTOINCREMENT (ids never reused), PostgreSQL a bigserial.
 */
export function createTableWithId(db: Kysely<unknown>, engine: Engine, table: string): CreateTableBuilder<string, 'id'> {
  const builder = db.schema.createTable(table);
  return engine === 'postgres'
    ? builder.addColumn('id', sql`bigserial`, (c) => c.primaryKey())
    : builder.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}
