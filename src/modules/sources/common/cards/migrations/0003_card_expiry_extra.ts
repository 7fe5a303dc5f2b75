import { sql, type Kysely } from 'kysely';

// Landed migrations are never edited: add a new numbered file instead.
//
// Real card files give expiries that cannot be read one way only (05/06/27: day-first or
// month-first?) and columns Dragnet has no field for:
// - exp_month and exp_year become nullable: such an expiry is stored as null, never guessed.
//   SQLite cannot drop a NOT NULL constraint, so on both engines the values move to new nullable
//   columns that then take the old names (DROP COLUMN and RENAME COLUMN: SQLite 3.35+).
// - extra: the input's other columns, a JSON object of header -> text (null when none).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('cards').addColumn('exp_month_nullable', 'integer').execute();
  await db.schema.alterTable('cards').addColumn('exp_year_nullable', 'integer').execute();
  await sql`update cards set exp_month_nullable = exp_month, exp_year_nullable = exp_year`.execute(db);
  for (const column of ['exp_month', 'exp_year']) {
    await db.schema.alterTable('cards').dropColumn(column).execute();
    await db.schema.alterTable('cards').renameColumn(`${column}_nullable`, column).execute();
  }
  await db.schema.alterTable('cards').addColumn('extra', 'text').execute();
}
