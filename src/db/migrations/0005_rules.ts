import { sql, type Kysely } from 'kysely';
import { createTableWithId, type MigrationContext } from '../migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  await createTableWithId(db, engine, 'alert_rules')
    .addColumn('org_id', 'bigint', (c) => c.notNull().references('organizations.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('service_id', 'integer', (c) => c.notNull())
    .addColumn('args', 'text', (c) => c.notNull())
    .addColumn('sender_id', 'bigint')
    .addColumn('email_template_id', 'bigint')
    .addColumn('webhook_id', 'bigint')
    .addColumn('frequency', 'text', (c) => c.notNull())
    .addColumn('total_alerts_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('total_matches_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_run', 'bigint')
    .addColumn('is_deleted', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('deleted_at', 'bigint')
    .addColumn('deleted_by', 'bigint')
    .addColumn('deletion_snapshot', 'text')
    .addColumn('created_by', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  // Names are unique among an organization's active rules; deleted rules keep theirs.
  await sql`create unique index alert_rules_active_name_idx on alert_rules (org_id, name) where is_deleted = 0`.execute(
    db,
  );
  await db.schema.createIndex('alert_rules_due_idx').on('alert_rules').columns(['is_deleted', 'last_run']).execute();

  await db.schema
    .createTable('alert_rule_recipients')
    .addColumn('rule_id', 'bigint', (c) => c.notNull().references('alert_rules.id').onDelete('cascade'))
    .addColumn('recipient_id', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('alert_rule_recipients_pk', ['rule_id', 'recipient_id'])
    .execute();
  await db.schema
    .createIndex('alert_rule_recipients_recipient_idx')
    .on('alert_rule_recipients')
    .column('recipient_id')
    .execute();

  await createTableWithId(db, engine, 'rule_runs')
    .addColumn('org_id', 'bigint', (c) => c.notNull())
    .addColumn('rule_id', 'bigint', (c) => c.notNull().references('alert_rules.id'))
    // "<rule id>:<window end>": a window is evaluated once, whoever runs it (spec 3.3, issue 6.4)
    .addColumn('run_key', 'text', (c) => c.notNull().unique())
    .addColumn('window_start', 'bigint')
    .addColumn('window_end', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('hits', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('completed_at', 'bigint')
    .execute();

  await createTableWithId(db, engine, 'matches')
    .addColumn('org_id', 'bigint', (c) => c.notNull())
    .addColumn('rule_id', 'bigint', (c) => c.notNull().references('alert_rules.id'))
    .addColumn('run_id', 'bigint', (c) => c.notNull().unique().references('rule_runs.id'))
    // pending (an async source is still working), complete, failed
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('total_hits', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('stored_hits', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('excluded_hits', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('window_start', 'bigint')
    .addColumn('window_end', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('completed_at', 'bigint')
    .execute();
  await db.schema.createIndex('matches_rule_idx').on('matches').columns(['org_id', 'rule_id', 'id']).execute();

  await createTableWithId(db, engine, 'match_hits')
    .addColumn('match_id', 'bigint', (c) => c.notNull().references('matches.id').onDelete('cascade'))
    .addColumn('rule_id', 'bigint', (c) => c.notNull())
    .addColumn('hit_key', 'text', (c) => c.notNull())
    .addColumn('hit_date', 'bigint', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('is_excluded', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('match_hits_match_idx').on('match_hits').columns(['match_id', 'hit_date']).execute();
  await db.schema.createIndex('match_hits_rule_idx').on('match_hits').column('rule_id').execute();

  await createTableWithId(db, engine, 'exclusions')
    .addColumn('org_id', 'bigint', (c) => c.notNull())
    .addColumn('rule_id', 'bigint', (c) => c.notNull().references('alert_rules.id'))
    .addColumn('field', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('exclusions_unique', ['rule_id', 'field', 'value'])
    .execute();

  // The outbox: written in the match's transaction, delivered by the dispatcher, so a crash
  // between the two loses nothing and a restarted process finishes what is pending.
  await createTableWithId(db, engine, 'notifications')
    .addColumn('org_id', 'bigint', (c) => c.notNull())
    .addColumn('rule_id', 'bigint', (c) => c.notNull())
    .addColumn('match_id', 'bigint', (c) => c.notNull().references('matches.id'))
    .addColumn('channel', 'text', (c) => c.notNull())
    // pending, sending, sent, failed
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('claimed_until', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('sent_at', 'bigint')
    .addUniqueConstraint('notifications_once', ['match_id', 'channel'])
    .execute();
  await db.schema.createIndex('notifications_status_idx').on('notifications').columns(['status', 'id']).execute();

  await createTableWithId(db, engine, 'jobs')
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('job_key', 'text', (c) => c.notNull().unique())
    .addColumn('payload', 'text', (c) => c.notNull())
    // queued, running, done, failed
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('run_after', 'bigint', (c) => c.notNull())
    .addColumn('claimed_until', 'bigint')
    .addColumn('error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('finished_at', 'bigint')
    .execute();
  await db.schema.createIndex('jobs_status_idx').on('jobs').columns(['status', 'run_after']).execute();
}
