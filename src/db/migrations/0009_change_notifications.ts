import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../migration-helpers.ts';
import { CHANGE_CHANNEL, WATCHED_TABLES } from '../change-feed.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// PostgreSQL: every committed change to a table that processes cache in memory is announced
// on CHANGE_CHANNEL with the table's name (db/change-feed.ts), once per statement: a
// notification is sent at commit, and identical ones of one transaction are sent once.
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  if (engine !== 'postgres') return;
  await sql`
    create function dragnet_notify_change() returns trigger language plpgsql as $$
    begin
      perform pg_notify(${sql.lit(CHANGE_CHANNEL)}, tg_table_name);
      return null;
    end $$`.execute(db);
  for (const table of WATCHED_TABLES) {
    await sql`create trigger ${sql.id(`${table}_changed`)} after insert or update or delete or truncate on ${sql.table(table)}
      for each statement execute function dragnet_notify_change()`.execute(db);
  }
}
