import { sql, type Kysely } from 'kysely';
import { createTableWithId, type MigrationContext } from '../migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// Long-lived API keys for machine clients (docs/api.md "API keys", issue 26). A key is 32
// random bytes: only its keyed digest (KeyRing.digest) is kept, with a short prefix to show in
// lists; nothing here lets anyone rebuild a key. `last_used_ip` and `used_logged_at` decide when
// `api_key.used` goes to the audit log (at most hourly per key, and on a new address).
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  await createTableWithId(db, engine, 'api_keys')
    .addColumn('org_id', 'bigint', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('created_by', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('key_digest', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint')
    .addColumn('last_used_at', 'bigint')
    .addColumn('last_used_ip', 'text')
    .addColumn('used_logged_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .addColumn('revoked_by', 'bigint', (c) => c.references('users.id').onDelete('set null'))
    .execute();
  // A name is unique among the organization's unrevoked keys; the list reads newest first.
  await db.schema
    .createIndex('api_keys_org_name_unrevoked')
    .on('api_keys')
    .columns(['org_id', 'name'])
    .unique()
    .where(sql.ref('revoked_at'), 'is', null)
    .execute();
  await db.schema.createIndex('api_keys_org_idx').on('api_keys').columns(['org_id', 'id']).execute();
  // Every process keeps the keys it authenticated in memory (db/read-cache.ts): on PostgreSQL
  // each change is announced like those to users (migration 0009's function).
  if (engine === 'postgres') {
    await sql`create trigger api_keys_changed after insert or update or delete or truncate on api_keys
      for each statement execute function dragnet_notify_change()`.execute(db);
  }
}
