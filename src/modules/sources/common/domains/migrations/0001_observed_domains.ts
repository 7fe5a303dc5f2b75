import type { Kysely } from 'kysely';
import { createTableWithId, type MigrationContext } from '../../../../../db/migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// observed_domains: each newly observed domain once (NRD lists, dnstwist scans, certificate
// names), in its ASCII (punycode) form, lower case. `registrable` is its registrable domain
// (tldts, ICANN suffixes), kept so matching never parses names again. `discovered_at` is when
// Dragnet first stored the domain (the rule window reads it); `first_seen` the earliest date any
// input gave for it (else discovered_at). registrar/ip/ipv6/name_servers/mx/country come from
// inputs that have them (dnstwist DNS and GeoIP data); name_servers and mx are JSON arrays.
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  await createTableWithId(db, engine, 'observed_domains')
    .addColumn('domain', 'text', (c) => c.notNull().unique())
    .addColumn('registrable', 'text', (c) => c.notNull())
    .addColumn('origin', 'text', (c) => c.notNull())
    .addColumn('registrar', 'text')
    .addColumn('ip', 'text')
    .addColumn('ipv6', 'text')
    .addColumn('name_servers', 'text')
    .addColumn('mx', 'text')
    .addColumn('country', 'text')
    .addColumn('registered_at', 'bigint')
    .addColumn('first_seen', 'bigint', (c) => c.notNull())
    .addColumn('discovered_at', 'bigint', (c) => c.notNull())
    .execute();
  // Matching pages through one window in id order; the window bound is discovered_at.
  await db.schema
    .createIndex('observed_domains_discovered_idx')
    .on('observed_domains')
    .columns(['discovered_at', 'id'])
    .execute();
}
