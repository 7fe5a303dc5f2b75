import type { Kysely } from 'kysely';
import { createTableWithId, type MigrationContext } from '../../../../db/migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// bucket_objects: one row per object seen in an open bucket's listing. `object_hash` (SHA-256 of
// provider, bucket and key) is unique: an object is stored once, as first listed, so a listing
// ingested again adds nothing and an object rewritten under the same key is no new sighting.
// (A digest rather than the key itself: keys run to 1,024 characters, past what a PostgreSQL
// index entry holds.) The matcher reads a window of `discovered_at`.
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  await createTableWithId(db, engine, 'bucket_objects')
    .addColumn('object_hash', 'text', (c) => c.notNull().unique())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('bucket', 'text', (c) => c.notNull())
    .addColumn('object_key', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('last_modified', 'bigint')
    .addColumn('etag', 'text')
    .addColumn('storage_class', 'text')
    .addColumn('region', 'text')
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('extension', 'text')
    .addColumn('source_name', 'text', (c) => c.notNull())
    .addColumn('discovered_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('bucket_objects_discovered_idx').on('bucket_objects').column('discovered_at').execute();
}
