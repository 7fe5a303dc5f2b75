import type { Kysely } from 'kysely';

// Landed migrations are never edited: add a new numbered file instead.
//
// What a stealer log says of the machine beyond country and OS, and what an Android login is
// for (docs/ingest.md "Stealer logs"):
// - machine: the machine's folder in the log (`US[4F2A…] [2025-07-30T13_42_43]`), which the
//   leak's name (the archive or top folder) used to stand for;
// - hwid: the hardware id from the machine's system file;
// - app_id: the Android package of an `android://<hash>@com.example.app/` URL, which has no domain.
// Kysely runs SQLite migrations outside a transaction, so a step may run again after an
// interruption: a column that is there already is left alone.
const COLUMNS = ['machine', 'hwid', 'app_id'];

export async function up(db: Kysely<unknown>): Promise<void> {
  const tables = await db.introspection.getTables();
  const existing = new Set(
    tables.find((table) => table.name === 'leak_credentials')?.columns.map((column) => column.name) ?? [],
  );
  for (const column of COLUMNS) {
    if (!existing.has(column)) await db.schema.alterTable('leak_credentials').addColumn(column, 'text').execute();
  }
}
