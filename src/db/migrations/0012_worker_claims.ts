import { sql, type Kysely } from 'kysely';

// Landed migrations are never edited: add a new numbered file instead.
//
// Work is claimed by a worker process, not for a lease (src/jobs/worker-presence.ts): each
// process that claims work has a row in `workers` that it keeps fresh, and a claim whose
// worker stopped being seen is taken over at once (a job, a rule run) or settled (a
// notification in doubt is marked failed). Claims of the old kind (a lease, no worker) count
// as abandoned: stop the old workers before upgrading.
//
// The hourly tick claims due rules in batches instead of every worker reading every rule:
// `due_at` is when a rule next falls due (last_run + its effective frequency; 0 before its
// first run), `tick_window` the window end it was last claimed for and `tick_claimed_by` by
// whom.
const FREQUENCY_HOURS = { daily: 24, twice_weekly: 84, weekly: 168, biweekly: 336, twice_monthly: 360, monthly: 720 };

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('workers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('pid', 'integer', (c) => c.notNull())
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('seen_at', 'bigint', (c) => c.notNull())
    .execute();

  for (const table of ['jobs', 'notifications']) {
    await db.schema.alterTable(table).addColumn('claimed_by', 'text').execute();
    await db.schema.alterTable(table).dropColumn('claimed_until').execute();
  }
  await db.schema.alterTable('rule_runs').addColumn('claimed_by', 'text').execute();

  await db.schema
    .alterTable('alert_rules')
    .addColumn('due_at', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('alert_rules').addColumn('tick_window', 'bigint').execute();
  await db.schema.alterTable('alert_rules').addColumn('tick_claimed_by', 'text').execute();
  const hours = sql.join(
    Object.entries(FREQUENCY_HOURS).map(([frequency, n]) => sql`when ${sql.lit(frequency)} then ${sql.lit(n)}`),
    sql` `,
  );
  await sql`update alert_rules set due_at = case when last_run is null then 0
    else last_run + (case frequency ${hours} else 24 end) * 3600000 end`.execute(db);
  await db.schema.createIndex('alert_rules_due_at_idx').on('alert_rules').columns(['is_deleted', 'due_at']).execute();
}
