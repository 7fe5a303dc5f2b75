import type { Kysely } from 'kysely';
import { createTableWithId, type MigrationContext } from '../../../../db/migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// ransomware_posts: one row per leak-site post (ransomware.live / ransomwatch records).
// - post_key: SHA-256 of group, victim words and publication time, unique, so re-ingesting a
//   posts file or re-fetching the feed adds nothing.
// - victim_words, victim_domains, site_domains, description_domains: the matching forms
//   (post-names.ts), space-separated and padded with a space at each end, so a rule's words or
//   registrable domain are found with one LIKE '% … %' on either engine.
// - published_at / listed_at: the group's and ransomware.live's own dates; discovered_at: when
//   Dragnet stored the post, the time a rule's window applies to.
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  await createTableWithId(db, engine, 'ransomware_posts')
    .addColumn('post_key', 'text', (c) => c.notNull().unique())
    .addColumn('group_name', 'text', (c) => c.notNull())
    .addColumn('victim', 'text', (c) => c.notNull())
    .addColumn('victim_words', 'text', (c) => c.notNull())
    .addColumn('victim_domains', 'text', (c) => c.notNull())
    .addColumn('website', 'text')
    .addColumn('site_domains', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('description_domains', 'text', (c) => c.notNull())
    .addColumn('country', 'text')
    .addColumn('activity', 'text')
    .addColumn('post_url', 'text')
    .addColumn('permalink', 'text')
    .addColumn('published_at', 'bigint', (c) => c.notNull())
    .addColumn('listed_at', 'bigint')
    .addColumn('discovered_at', 'bigint', (c) => c.notNull())
    .execute();
  // A rule reads the posts of its window, newest first.
  await db.schema
    .createIndex('ransomware_posts_discovered_idx')
    .on('ransomware_posts')
    .column('discovered_at')
    .execute();
}
