import type { Kysely } from 'kysely';
import { createTableWithId, type MigrationContext } from '../../../../db/migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// Raw leak files are kept as files in the data folder, named by their SHA-256 (the same file
// ingested twice is stored once). A row says what the file is; `line_index` holds the number of
// lines before every 1 MiB block, so a scan numbers the lines of a matching block without
// counting the lines of every block before it.
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  await createTableWithId(db, engine, 'raw_leak_files')
    .addColumn('sha256', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('file_type', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('lines', 'bigint', (c) => c.notNull())
    .addColumn('line_index', 'text', (c) => c.notNull())
    .addColumn('indexed_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('raw_leak_files_indexed_idx').on('raw_leak_files').column('indexed_at').execute();
}
