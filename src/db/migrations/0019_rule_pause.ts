import type { Kysely } from 'kysely';

// Landed migrations are never edited: add a new numbered file instead.
//
// A rule can be paused (docs/api.md "Pause, run now, preview"): the tick's claim of due rules
// passes it over until it is resumed. Who paused it and when are kept for the dashboard; the
// audit log keeps every pause and resume.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('alert_rules')
    .addColumn('is_paused', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('alert_rules').addColumn('paused_at', 'bigint').execute();
  await db.schema.alterTable('alert_rules').addColumn('paused_by', 'bigint').execute();
}
