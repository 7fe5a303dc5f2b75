import { sql, type Kysely } from 'kysely';
import { withoutOldCopies, type MigrationContext } from '../migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// A webhook's custom headers usually carry the receiver's credentials (Authorization, an API
// key): they were kept as plain JSON. They are now sealed with the master key like the webhook
// secret and SMTP passwords: the column holds the whole JSON object, sealed.
export async function up(db: Kysely<unknown>, context: MigrationContext): Promise<void> {
  await db.schema.alterTable('webhooks').renameColumn('headers', 'headers_sealed').execute();
  const { rows } = await sql<{ id: number; headers_sealed: string }>`select id, headers_sealed from webhooks`.execute(
    db,
  );
  if (rows.length === 0) return;
  const keys = context.keys;
  await withoutOldCopies(db, context.engine, async () => {
    for (const row of rows) {
      await sql`update webhooks set headers_sealed = ${keys.encryptSecret(row.headers_sealed)} where id = ${row.id}`.execute(
        db,
      );
    }
  });
}
