import type { Kysely } from 'kysely';

// Landed migrations are never edited: add a new numbered file instead.
//
// Each rule's findings leave Dragnet (STIX bundles, TAXII, MISP) under a Traffic Light Protocol
// 2.0 marking chosen per rule; AMBER until a user says otherwise (docs/stix.md).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('alert_rules')
    .addColumn('tlp', 'text', (c) => c.notNull().defaultTo('amber'))
    .execute();
}
