import type { Kysely } from 'kysely';

// Landed migrations are never edited: add a new numbered file instead.
//
// The TAXII 2.1 server (docs/taxii.md) walks an organization's hits in the order of its
// collections: by the incident's created_at (the objects' date_added), the incident, then the
// hit. Keyset pages only: the incidents of an organization (or of one of its rules) in
// (created_at, id) order, and each incident's hits in id order.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('matches_taxii_idx').on('matches').columns(['org_id', 'created_at', 'id']).execute();
  await db.schema
    .createIndex('matches_taxii_rule_idx')
    .on('matches')
    .columns(['org_id', 'rule_id', 'created_at', 'id'])
    .execute();
  await db.schema.createIndex('match_hits_taxii_idx').on('match_hits').columns(['match_id', 'id']).execute();
}
