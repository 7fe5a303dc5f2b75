import { sql, type Kysely } from 'kysely';

// Landed migrations are never edited: add a new numbered file instead.
//
// The operator's system sender exists once: every process writes it at start-up as an upsert
// on this index. Processes that started at once before it could each have inserted one; the
// oldest is kept and rules that used another use it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`update alert_rules set sender_id = (select min(id) from senders where is_system_created = 1)
    where sender_id in (select id from senders where is_system_created = 1 and id > (select min(id) from senders where is_system_created = 1))`.execute(
    db,
  );
  await sql`delete from senders where is_system_created = 1 and id > (select min(id) from senders where is_system_created = 1)`.execute(
    db,
  );
  await sql`create unique index senders_one_system_idx on senders (is_system_created) where is_system_created = 1`.execute(
    db,
  );
}
