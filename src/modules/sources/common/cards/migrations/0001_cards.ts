import type { Kysely } from 'kysely';
import { createTableWithId, type MigrationContext } from '../../../../../db/migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// The card store shared by the credit-card and BIN-CVV sources (PCI DSS 3.3/3.4: no full PAN,
// no CVV, ever).
// - cards: one row per sighting of a card in a source (a dump file, a shop export). The PAN is
//   kept as its issuer prefix (`iin`: 8 digits for PANs of 16+, else 6; `bin6` for indexed
//   lookups), its last four and a keyed digest (`pan_hash`, exact lookups). `sighting_key`, a
//   keyed digest of PAN, expiry and source name, makes re-ingesting a file add nothing.
//   `has_cvv` records only whether a CVV was present. brand, card_type, issuer and country
//   come from the BIN table at ingest (and again when the table is replaced).
// - card_bins: the BIN table, one row per prefix (6-8 digits); the longest prefix wins.
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  await createTableWithId(db, engine, 'cards')
    .addColumn('sighting_key', 'text', (c) => c.notNull().unique())
    .addColumn('pan_hash', 'text', (c) => c.notNull())
    .addColumn('bin6', 'text', (c) => c.notNull())
    .addColumn('iin', 'text', (c) => c.notNull())
    .addColumn('last4', 'text', (c) => c.notNull())
    .addColumn('pan_length', 'integer', (c) => c.notNull())
    .addColumn('brand', 'text')
    .addColumn('card_type', 'text')
    .addColumn('issuer', 'text')
    .addColumn('country', 'text')
    .addColumn('level', 'text')
    .addColumn('exp_month', 'integer', (c) => c.notNull())
    .addColumn('exp_year', 'integer', (c) => c.notNull())
    .addColumn('has_cvv', 'integer', (c) => c.notNull())
    .addColumn('holder', 'text')
    .addColumn('billing_state', 'text')
    .addColumn('billing_country', 'text')
    .addColumn('price_cents', 'integer')
    .addColumn('base', 'text')
    .addColumn('shop', 'text')
    .addColumn('source_name', 'text', (c) => c.notNull())
    .addColumn('source_type', 'text', (c) => c.notNull())
    .addColumn('discovered_at', 'bigint', (c) => c.notNull())
    .execute();
  // Newest-first reads of one BIN's cards in a window; issuer-only rules read the window.
  await db.schema.createIndex('cards_bin_idx').on('cards').columns(['bin6', 'discovered_at']).execute();
  await db.schema.createIndex('cards_discovered_idx').on('cards').column('discovered_at').execute();
  await db.schema.createIndex('cards_pan_hash_idx').on('cards').column('pan_hash').execute();

  await db.schema
    .createTable('card_bins')
    .addColumn('prefix', 'text', (c) => c.primaryKey())
    .addColumn('scheme', 'text')
    .addColumn('card_type', 'text')
    .addColumn('country', 'text')
    .addColumn('bank_name', 'text')
    .execute();
}
