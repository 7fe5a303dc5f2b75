import type { Kysely } from 'kysely';
import { createTableWithId, type MigrationContext } from '../../../../db/migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// short_links: one row per short link of a URL-shortener dump, unique on (service, shortcode)
// so re-ingesting a dump adds nothing.
// - target_host: the long URL's host, ASCII (punycode) and lower case; target_domain: its
//   registrable domain (the host itself for an IP or a host under no known suffix). A rule reads
//   one target_domain, then keeps the watched host and the hosts under it.
// - target_path: the URL path decoded and lower-cased, for path_contains on either engine.
// - crawled_at: the dump's #TIMESTAMP when it has one; discovered_at: when Dragnet stored the
//   link, the time a rule's window applies to.
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  await createTableWithId(db, engine, 'short_links')
    .addColumn('service', 'text', (c) => c.notNull())
    .addColumn('shortcode', 'text', (c) => c.notNull())
    .addColumn('short_url', 'text', (c) => c.notNull())
    .addColumn('target_url', 'text', (c) => c.notNull())
    .addColumn('target_host', 'text', (c) => c.notNull())
    .addColumn('target_domain', 'text', (c) => c.notNull())
    .addColumn('target_path', 'text', (c) => c.notNull())
    .addColumn('crawled_at', 'bigint')
    .addColumn('discovered_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('short_links_service_shortcode_key', ['service', 'shortcode'])
    .execute();
  await db.schema
    .createIndex('short_links_domain_idx')
    .on('short_links')
    .columns(['target_domain', 'discovered_at'])
    .execute();
}
