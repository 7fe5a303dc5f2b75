import { sql, type Kysely } from 'kysely';

// Landed migrations are never edited: add a new numbered file instead.
//
// A rule's runs still 'running', found when its next run starts (run.repository.ts
// closeSuperseded): run history grows by a row per rule and window, and only runs in flight (or
// left by a dead worker) are in this index, so the lookup stays as small as they are.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('rule_runs_running_idx')
    .on('rule_runs')
    .column('rule_id')
    .where(sql.ref('status'), '=', 'running')
    .execute();
}
