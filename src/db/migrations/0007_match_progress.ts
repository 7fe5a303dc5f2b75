import type { Kysely } from 'kysely';

// Landed migrations are never edited: add a new numbered file instead.
//
// An async source's background job reports how far it has got on its pending match, so a user
// (and an operator) can tell a long scan from a stuck one: JSON {done, total, unit}.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('matches').addColumn('progress', 'text').execute();
}
