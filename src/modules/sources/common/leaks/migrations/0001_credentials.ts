import type { Kysely } from 'kysely';
import { createTableWithId, type MigrationContext } from '../../../../../db/migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// The credential store shared by the filtered-leak and distinct-leak sources.
// - leak_files: one row per ingested file content (a combolist, one machine's passwords file
//   of a stealer log), by SHA-256. `lines_done` moves with every stored batch, in the same
//   transaction: an interrupted ingest resumes after the last stored line, and a file ingested
//   again adds nothing. `name` is the leak it belongs to (the archive, folder or file name).
// - leak_credentials: every credential sighting. Passwords are sealed with the master key;
//   `password_hash` is a keyed digest for equality, `password_sha1_prefix` the first 5 hex
//   digits of the SHA-1 (a range query, as HIBP's). The distinct view (one row per login, site
//   and password) is grouped from these rows when asked, through the login and domain indexes,
//   so an ingest writes one row per credential and nothing else.
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  await createTableWithId(db, engine, 'leak_files')
    .addColumn('sha256', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('lines_done', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('records', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('complete', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('ingested_at', 'bigint', (c) => c.notNull())
    .execute();

  await createTableWithId(db, engine, 'leak_credentials')
    .addColumn('leak_id', 'bigint', (c) => c.notNull().references('leak_files.id'))
    .addColumn('login', 'text', (c) => c.notNull())
    // The login lower-cased: email and username look-ups, and the distinct view's key.
    .addColumn('login_key', 'text', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('login_host', 'text')
    .addColumn('login_domain', 'text')
    .addColumn('url', 'text')
    .addColumn('host', 'text')
    .addColumn('domain', 'text')
    .addColumn('url_kind', 'text')
    .addColumn('password_sealed', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('password_sha1_prefix', 'text', (c) => c.notNull())
    .addColumn('hash_type', 'text')
    .addColumn('software', 'text')
    .addColumn('country', 'text')
    .addColumn('os', 'text')
    .addColumn('leaked_at', 'bigint')
    .addColumn('discovered_at', 'bigint', (c) => c.notNull())
    .execute();
  // Newest-first reads of one domain's (or one login domain's) credentials in a window.
  await db.schema
    .createIndex('leak_credentials_domain_idx')
    .on('leak_credentials')
    .columns(['domain', 'discovered_at'])
    .execute();
  await db.schema
    .createIndex('leak_credentials_login_domain_idx')
    .on('leak_credentials')
    .columns(['login_domain', 'discovered_at'])
    .execute();
  await db.schema.createIndex('leak_credentials_login_idx').on('leak_credentials').column('login_key').execute();
  await db.schema
    .createIndex('leak_credentials_sha1_prefix_idx')
    .on('leak_credentials')
    .column('password_sha1_prefix')
    .execute();
}
