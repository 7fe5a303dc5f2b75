import type { Kysely } from 'kysely';
import { createTableWithId, type MigrationContext } from '../migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// Incidents (docs/api.md "Incidents"): a match is worked as an incident. Its status and assignee
// live on the match row so the inbox filters and counts without a join; every change and note is
// kept, with who and when, in incident_events. Existing matches start as `new`.
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  await db.schema
    .alterTable('matches')
    .addColumn('incident_status', 'text', (c) => c.notNull().defaultTo('new'))
    .execute();
  await db.schema.alterTable('matches').addColumn('assignee_id', 'bigint').execute();
  await db.schema.alterTable('matches').addColumn('status_changed_at', 'bigint').execute();
  await db.schema.alterTable('matches').addColumn('status_changed_by', 'bigint').execute();
  // The inbox lists an organization's incidents newest first, mostly by status; the nav counts them.
  await db.schema
    .createIndex('matches_incident_idx')
    .on('matches')
    .columns(['org_id', 'incident_status', 'id'])
    .execute();

  await createTableWithId(db, engine, 'incident_events')
    .addColumn('org_id', 'bigint', (c) => c.notNull())
    .addColumn('match_id', 'bigint', (c) => c.notNull().references('matches.id').onDelete('cascade'))
    .addColumn('user_id', 'bigint')
    // status, assignee, note
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('from_value', 'text')
    .addColumn('to_value', 'text')
    .addColumn('note', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('incident_events_match_idx').on('incident_events').columns(['match_id', 'id']).execute();
}
