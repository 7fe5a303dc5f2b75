import type { Kysely } from 'kysely';

// Landed migrations are never edited: add a new numbered file instead.
//
// Settings a running server shares with the other processes on its store. `dashboard_url`: the
// address `dragnet serve` runs at (or its DRAGNET_DASHBOARD_URL), so that `dragnet rules tick`
// from cron, without the server's HOST/PORT, links notifications to the same dashboard.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('server_settings')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
}
