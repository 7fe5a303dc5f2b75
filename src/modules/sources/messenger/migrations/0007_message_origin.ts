import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../../../../db/migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// Where a message came from and what became of it, as Telegram Desktop exports say it: the
// origin of a forward (its name and its id, `channel1234`/`user42`), the bot it was sent via,
// the message it replies to, and when it was last edited (epoch ms). On PostgreSQL the columns
// are added to the partitioned table, and so to every month's partition.
//
// Kysely runs SQLite migrations outside a transaction: a column already added by an interrupted
// run is not added again.
const COLUMNS = [
  ['forwarded_from', 'text'],
  ['forwarded_from_id', 'text'],
  ['via_bot', 'text'],
  ['reply_to_message_id', 'bigint'],
  ['edited_at', 'bigint'],
] as const;

export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  if (engine === 'postgres') {
    for (const [name, type] of COLUMNS)
      await sql`alter table messages add column if not exists ${sql.ref(name)} ${sql.raw(type)}`.execute(db);
    return;
  }
  const { rows } = await sql<{ name: string }>`pragma table_info(messages)`.execute(db);
  const present = new Set(rows.map((row) => row.name));
  for (const [name, type] of COLUMNS) {
    if (!present.has(name)) await sql`alter table messages add column ${sql.ref(name)} ${sql.raw(type)}`.execute(db);
  }
}
