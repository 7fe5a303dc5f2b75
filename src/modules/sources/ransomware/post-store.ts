import { slices, writeRows } from '../../../db/bulk-insert.ts';
import { createHash } from 'node:crypto';
import type { Generated } from 'kysely';
import type { SourceContext } from '../kit/source.ts';
import * as m0001 from './migrations/0001_posts.ts';
import { domainsNamedIn, padded, wordsOf } from './post-names.ts';
import type { PostRecord } from './post-record.ts';

/** The table of migration ransomware/0001_posts. */
export interface RansomwarePostTable {
  id: Generated<number>;
  post_key: string;
  group_name: string;
  victim: string;
  victim_words: string;
  victim_domains: string;
  website: string | null;
  site_domains: string;
  description: string | null;
  description_domains: string;
  country: string | null;
  activity: string | null;
  post_url: string | null;
  permalink: string | null;
  published_at: number;
  listed_at: number | null;
  discovered_at: number;
}

// A type alias, not an interface: withTables needs an index-signature-compatible type.
export type RansomwareTables = { ransomware_posts: RansomwarePostTable };

export const ransomwareMigrations = { 'ransomware/0001_posts': m0001 };

export const postDb = (context: SourceContext) => context.db.withTables<RansomwareTables>();

/**
 * A post's natural key: the group, the victim's words (so "ACME Bank PLC." and "Acme Bank PLC"
 * are one victim) and the publication time. The same victim posted again later is a new post.
 */
export const postKeyOf = (post: PostRecord): string =>
  createHash('sha256')
    .update(`${post.group}\n${wordsOf(post.victim).join(' ')}\n${post.publishedAt}`)
    .digest('hex');

// Rows per INSERT: 16 columns × 500 stays under SQLite's 32,766 bound variables.
const ROWS_PER_STATEMENT = 500;

const rowOf = (post: PostRecord, discoveredAt: number) => ({
  post_key: postKeyOf(post),
  group_name: post.group,
  victim: post.victim,
  victim_words: padded(wordsOf(post.victim)),
  victim_domains: padded(domainsNamedIn(post.victim)),
  website: post.website,
  site_domains: padded(post.website ? domainsNamedIn(post.website) : []),
  description: post.description,
  description_domains: padded(post.description ? domainsNamedIn(post.description) : []),
  country: post.country,
  activity: post.activity,
  post_url: post.postUrl,
  permalink: post.permalink,
  published_at: post.publishedAt,
  listed_at: post.listedAt,
  discovered_at: discoveredAt,
});

/**
 * Stores posts in one transaction; a post already stored (same key) is skipped and keeps the
 * discovered_at it was first stored with, so a re-fetched feed alerts only on new posts.
 */
export async function writePosts(
  context: SourceContext,
  posts: PostRecord[],
  discoveredAt: number,
): Promise<{ added: number; duplicates: number }> {
  if (posts.length === 0) return { added: 0, duplicates: 0 };
  const added = await writeRows(postDb(context), context.engine, {
    table: 'ransomware_posts',
    rows: posts.map((post) => rowOf(post, discoveredAt)),
    conflict: ['post_key'],
    statements: slices(ROWS_PER_STATEMENT),
  });
  return { added, duplicates: posts.length - added };
}
