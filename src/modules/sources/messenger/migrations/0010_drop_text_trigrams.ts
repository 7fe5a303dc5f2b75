import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../../../../db/migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// PostgreSQL: the messages' pg_trgm GIN index goes (docs/architecture.md "Search", issue 24).
// The word index (migration messenger/0009) now narrows every search shape, also terms with
// punctuation inside, and was ~80% of the CPU an ingest spent in the database: ~190 trigram
// entries a message against ~40 word ids. Dropping the partitioned index drops each month's.
// The lexicon keeps its own small trigram index, which finds the words containing a term.
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  if (engine !== 'postgres') return;
  await sql`drop index if exists messages_text_trgm_idx`.execute(db);
}
