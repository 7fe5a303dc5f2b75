import type { Kysely } from 'kysely';
import { createTableWithId, type MigrationContext } from '../migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// Security events of each organization (docs/api.md "Audit log"): who did what to which user,
// sender or webhook, from where. Rows are only ever added; `details` is a small JSON object
// written by the server, never a request body, so no secret reaches it.
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  await createTableWithId(db, engine, 'audit_log')
    .addColumn('org_id', 'bigint', (c) => c.notNull().references('organizations.id'))
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('actor_user_id', 'bigint')
    .addColumn('actor_email', 'text')
    .addColumn('target_type', 'text', (c) => c.notNull())
    .addColumn('target_id', 'bigint', (c) => c.notNull())
    .addColumn('target_name', 'text')
    .addColumn('via', 'text', (c) => c.notNull())
    .addColumn('ip_address', 'text')
    .addColumn('details', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  // The log is read per organization, newest first, a page at a time.
  await db.schema.createIndex('audit_log_org_idx').on('audit_log').columns(['org_id', 'id']).execute();
}
