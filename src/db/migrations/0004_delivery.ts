import { sql, type Kysely } from 'kysely';
import { createTableWithId, type MigrationContext } from '../migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  // One default per organization and type, enforced by the store itself: concurrent requests
  // can race, but the partial unique index lets only one of them commit a second default.
  const oneDefault = async (table: string) =>
    sql`create unique index ${sql.raw(`${table}_one_default_idx`)} on ${sql.raw(table)} (org_id) where is_default = 1`.execute(
      db,
    );

  await createTableWithId(db, engine, 'recipients')
    .addColumn('org_id', 'bigint', (c) => c.notNull().references('organizations.id'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('is_default', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('recipients_org_email_unique', ['org_id', 'email'])
    .execute();
  await oneDefault('recipients');

  await createTableWithId(db, engine, 'senders')
    // null: the operator's system sender, seen by every organization
    .addColumn('org_id', 'bigint', (c) => c.references('organizations.id'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('server_host', 'text', (c) => c.notNull())
    .addColumn('port', 'integer', (c) => c.notNull())
    .addColumn('username_sealed', 'text')
    .addColumn('password_sealed', 'text')
    .addColumn('encryption_method', 'text', (c) => c.notNull())
    .addColumn('authentication_required', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('is_default', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_system_created', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await oneDefault('senders');
  await db.schema.createIndex('senders_org_idx').on('senders').column('org_id').execute();

  await createTableWithId(db, engine, 'email_templates')
    .addColumn('org_id', 'bigint', (c) => c.notNull().references('organizations.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('is_default', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await oneDefault('email_templates');
  await db.schema.createIndex('email_templates_org_idx').on('email_templates').column('org_id').execute();

  await createTableWithId(db, engine, 'webhooks')
    .addColumn('org_id', 'bigint', (c) => c.notNull().references('organizations.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('headers', 'text', (c) => c.notNull())
    .addColumn('secret_sealed', 'text', (c) => c.notNull())
    .addColumn('is_default', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await oneDefault('webhooks');
  await db.schema.createIndex('webhooks_org_idx').on('webhooks').column('org_id').execute();

  await createTableWithId(db, engine, 'delivery_attempts')
    .addColumn('org_id', 'bigint', (c) => c.notNull().references('organizations.id'))
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('rule_id', 'bigint')
    .addColumn('match_id', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('delivery_attempts_org_idx')
    .on('delivery_attempts')
    .columns(['org_id', 'created_at'])
    .execute();
}
