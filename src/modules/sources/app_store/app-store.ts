import { slices, writeRows } from '../../../db/bulk-insert.ts';
import type { Generated } from 'kysely';
import type { SourceContext } from '../kit/source.ts';
import type { AppListing } from './app-listing.ts';
import { compactText, normalText } from './brand-match.ts';
import * as m0001 from './migrations/0001_app_listings.ts';

/** The table of migration app_store/0001_app_listings. */
export interface AppListingTable {
  id: Generated<number>;
  platform: string;
  app_id: string;
  version: string;
  store: string;
  store_id: string | null;
  name: string;
  developer: string | null;
  developer_id: string | null;
  seller: string | null;
  url: string | null;
  installs: number | null;
  rating: number | null;
  rating_count: number | null;
  genre: string | null;
  released_at: number | null;
  updated_at: number | null;
  names_compact: string;
  description_words: string;
  source_name: string;
  discovered_at: number;
}

// A type alias, not an interface: withTables needs an index-signature-compatible type.
export type AppStoreTables = { app_listings: AppListingTable };

export const appStoreMigrations = { 'app_store/0001_app_listings': m0001 };

export const appDb = (context: SourceContext) => context.db.withTables<AppStoreTables>();

// Rows per INSERT: 20 columns × 500 stays under SQLite's 32,766 bound variables.
const ROWS_PER_STATEMENT = 500;

export interface WriteCounts {
  added: number;
  duplicates: number;
}

const rowOf = (listing: AppListing, sourceName: string, discoveredAt: number) => ({
  platform: listing.platform,
  app_id: listing.appId,
  version: listing.version,
  store: listing.store,
  store_id: listing.storeId,
  name: listing.name,
  developer: listing.developer,
  developer_id: listing.developerId,
  seller: listing.seller,
  url: listing.url,
  installs: listing.installs,
  rating: listing.rating,
  rating_count: listing.ratingCount,
  genre: listing.genre,
  released_at: listing.releasedAt,
  updated_at: listing.updatedAt,
  names_compact: compactText(`${listing.name} ${listing.appId} ${listing.developer ?? ''}`),
  description_words: normalText(listing.description),
  source_name: sourceName,
  discovered_at: discoveredAt,
});

/**
 * Stores listings in one transaction per call; a version of an app already stored (same
 * platform, app id and version) is a duplicate and left as it was first seen.
 */
export async function writeListings(
  context: SourceContext,
  listings: AppListing[],
  source: { name: string; discoveredAt: number },
): Promise<WriteCounts> {
  if (listings.length === 0) return { added: 0, duplicates: 0 };
  const added = await writeRows(appDb(context), context.engine, {
    table: 'app_listings',
    rows: listings.map((listing) => rowOf(listing, source.name, source.discoveredAt)),
    conflict: ['platform', 'app_id', 'version'],
    statements: slices(ROWS_PER_STATEMENT),
  });
  return { added, duplicates: listings.length - added };
}
