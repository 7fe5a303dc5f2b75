import type { Kysely } from 'kysely';
import { createTableWithId, type MigrationContext } from '../../../../db/migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// The credential store shared by the filtered-leak and distinct-leak sources.
// - leak_files: one row per leak (a combolist file, a stealer-log archive or folder), by name.
// - leak_credentials: every sighting of a credential in a leak; `sighting_key` (a keyed digest
//   of leak, login, URL and password) makes re-ingesting a file add nothing. Passwords are
//   sealed with the master key; `password_hash` is a keyed digest, for equality only.
// - distinct_credentials: one row per (lower-cased login, site domain, password), first and last seen and
//   in how many leaks; distinct_credential_leaks records which leaks, so a count is exact.
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  await createTableWithId(db, engine, 'leak_files')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('records', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('first_ingested_at', 'bigint', (c) => c.notNull())
    .addColumn('last_ingested_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('leak_files_identity_unique', ['kind', 'name'])
    .execute();

  await createTableWithId(db, engine, 'leak_credentials')
    .addColumn('leak_id', 'bigint', (c) => c.notNull().references('leak_files.id'))
    .addColumn('sighting_key', 'text', (c) => c.notNull().unique())
    .addColumn('login', 'text', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('login_host', 'text')
    .addColumn('login_domain', 'text')
    .addColumn('url', 'text')
    .addColumn('host', 'text')
    .addColumn('domain', 'text')
    .addColumn('url_kind', 'text')
    .addColumn('password_sealed', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('hash_type', 'text')
    .addColumn('software', 'text')
    .addColumn('country', 'text')
    .addColumn('os', 'text')
    .addColumn('leaked_at', 'bigint')
    .addColumn('discovered_at', 'bigint', (c) => c.notNull())
    .execute();
  // Newest-first reads of one domain's (or one login domain's) credentials in a window.
  await db.schema.createIndex('leak_credentials_domain_idx').on('leak_credentials').columns(['domain', 'discovered_at']).execute();
  await db.schema.createIndex('leak_credentials_login_domain_idx').on('leak_credentials').columns(['login_domain', 'discovered_at']).execute();
  await db.schema.createIndex('leak_credentials_email_idx').on('leak_credentials').column('email').execute();

  await createTableWithId(db, engine, 'distinct_credentials')
    .addColumn('distinct_key', 'text', (c) => c.notNull().unique())
    .addColumn('login', 'text', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('login_domain', 'text')
    .addColumn('domain', 'text')
    .addColumn('url', 'text')
    .addColumn('password_sealed', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('hash_type', 'text')
    // The first 5 hex digits of the password's SHA-1: a range query (as HIBP's k-anonymity API)
    // that names 1 in a million of all passwords, never one password.
    .addColumn('password_sha1_prefix', 'text', (c) => c.notNull())
    .addColumn('first_seen', 'bigint', (c) => c.notNull())
    .addColumn('last_seen', 'bigint', (c) => c.notNull())
    .addColumn('sources', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('distinct_credentials_domain_idx').on('distinct_credentials').columns(['domain', 'first_seen']).execute();
  await db.schema.createIndex('distinct_credentials_login_domain_idx').on('distinct_credentials').columns(['login_domain', 'first_seen']).execute();
  await db.schema.createIndex('distinct_credentials_login_idx').on('distinct_credentials').columns(['login', 'first_seen']).execute();
  await db.schema.createIndex('distinct_credentials_sha1_prefix_idx').on('distinct_credentials').column('password_sha1_prefix').execute();

  await db.schema
    .createTable('distinct_credential_leaks')
    .addColumn('distinct_key', 'text', (c) => c.notNull())
    .addColumn('leak_id', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('distinct_credential_leaks_pk', ['distinct_key', 'leak_id'])
    .execute();
}
