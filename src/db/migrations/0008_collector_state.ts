import type { Kysely } from 'kysely';

// Landed migrations are never edited: add a new numbered file instead.
//
// One row per collector (docs/collectors.md): where it stopped (cursor), when it runs next, and
// its health. `claimed_until` is a lease, so one process of a scale-out deployment runs a
// collector at a time and a crashed one's lease runs out.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('collector_state')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('cursor', 'text')
    .addColumn('next_run_at', 'bigint', (c) => c.notNull())
    .addColumn('claimed_until', 'bigint')
    .addColumn('runs', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('items_last_run', 'integer')
    .addColumn('items_total', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('last_run_at', 'bigint')
    .addColumn('last_success_at', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('last_error_at', 'bigint')
    .execute();
}
