import type { Kysely } from 'kysely';
import { createTableWithId, type MigrationContext } from '../migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  await createTableWithId(db, engine, 'organizations')
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('alert_rule_limit', 'integer', (c) => c.notNull())
    .addColumn('used_credits', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('default_frequency', 'text', (c) => c.notNull().defaultTo('daily'))
    .addColumn('dashboard_url', 'text')
    .addColumn('managed_by_org_id', 'bigint', (c) => c.references('organizations.id'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await createTableWithId(db, engine, 'users')
    .addColumn('org_id', 'bigint', (c) => c.notNull().references('organizations.id'))
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull().defaultTo('member'))
    .addColumn('is_active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('token_version', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('totp_enabled', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('totp_secret', 'text')
    .addColumn('totp_pending_secret', 'text')
    .addColumn('totp_last_step', 'bigint')
    .addColumn('password_changed_at', 'bigint', (c) => c.notNull())
    .addColumn('last_login_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('users_org_idx').on('users').column('org_id').execute();

  await createTableWithId(db, engine, 'backup_codes')
    .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('code_digest', 'text', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('backup_codes_user_idx').on('backup_codes').column('user_id').execute();

  await createTableWithId(db, engine, 'auth_failures')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('failed_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('auth_failures_scope_idx').on('auth_failures').columns(['scope', 'failed_at']).execute();
}
