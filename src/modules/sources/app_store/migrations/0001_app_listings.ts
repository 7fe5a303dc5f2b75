import type { Kysely } from 'kysely';
import { createTableWithId, type MigrationContext } from '../../../../db/migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// app_listings: one row per sighting of an app version in a store listing (an iTunes
// Search/Lookup result, a google-play-scraper record). (platform, app_id, version) is unique, so
// re-ingesting a listing adds nothing and a new version of the app is a new row; the matcher
// reports an app once per rule (docs/sources.md "App stores").
// - names_compact: the words of name, app id and developer written together, and
//   description_words the words of the description and summary one space apart (lowercase,
//   accents and lookalike letters folded): the matcher's LIKE prefilter runs on them, and its
//   word matching reads the description's words back. The description itself is not kept.
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  await createTableWithId(db, engine, 'app_listings')
    .addColumn('platform', 'text', (c) => c.notNull())
    .addColumn('app_id', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('store', 'text', (c) => c.notNull())
    .addColumn('store_id', 'text')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('developer', 'text')
    .addColumn('developer_id', 'text')
    .addColumn('seller', 'text')
    .addColumn('url', 'text')
    .addColumn('installs', 'bigint')
    .addColumn('rating', 'double precision')
    .addColumn('rating_count', 'bigint')
    .addColumn('genre', 'text')
    .addColumn('released_at', 'bigint')
    .addColumn('updated_at', 'bigint')
    .addColumn('names_compact', 'text', (c) => c.notNull())
    .addColumn('description_words', 'text', (c) => c.notNull())
    .addColumn('source_name', 'text', (c) => c.notNull())
    .addColumn('discovered_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('app_listings_version_key')
    .unique()
    .on('app_listings')
    .columns(['platform', 'app_id', 'version'])
    .execute();
  // A run reads the window's sightings, then every earlier sighting of the same apps.
  await db.schema.createIndex('app_listings_discovered_idx').on('app_listings').column('discovered_at').execute();
}
