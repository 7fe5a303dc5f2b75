import { slices, writeRows } from '../../../db/bulk-insert.ts';
import type { Generated } from 'kysely';
import { parseDomainName } from '../common/domains/domain-name.ts';
import type { SourceContext } from '../kit/source.ts';
import * as m0001 from './migrations/0001_short_links.ts';

/** The table of migration url_shortener/0001_short_links. */
export interface ShortLinkTable {
  id: Generated<number>;
  service: string;
  shortcode: string;
  short_url: string;
  target_url: string;
  target_host: string;
  target_domain: string;
  target_path: string;
  crawled_at: number | null;
  discovered_at: number;
}

// A type alias, not an interface: withTables needs an index-signature-compatible type.
export type ShortLinkTables = { short_links: ShortLinkTable };

export const shortLinkMigrations = { 'url_shortener/0001_short_links': m0001 };

export const shortLinkDb = (context: SourceContext) => context.db.withTables<ShortLinkTables>();

/** One short link as a dump gives it. */
export interface ShortLink {
  /** The shortener's host name (`v.gd`). */
  service: string;
  /** What the service's short URLs start with (`https://v.gd/`). */
  prefix: string;
  shortcode: string;
  /** The long URL as written in the dump. */
  targetUrl: string;
  target: URL;
  crawledAt: number | null;
}

/** The registrable domain of a host, or the host itself (an IP, a name under no known suffix). */
export function registrableOf(host: string): string {
  const name = parseDomainName(host);
  return typeof name === 'string' ? host : name.registrable;
}

function decodedPath(url: URL): string {
  try {
    return decodeURIComponent(url.pathname);
  } catch {
    return url.pathname;
  }
}

// Rows per INSERT: 9 columns × 1000 stays under SQLite's 32,766 bound variables.
const ROWS_PER_STATEMENT = 1000;

const rowOf = (link: ShortLink, discoveredAt: number) => {
  const host = link.target.hostname.replace(/\.$/, '');
  return {
    service: link.service,
    shortcode: link.shortcode,
    short_url: link.prefix + link.shortcode,
    target_url: link.targetUrl,
    target_host: host,
    target_domain: registrableOf(host),
    target_path: decodedPath(link.target).toLowerCase(),
    crawled_at: link.crawledAt,
    discovered_at: discoveredAt,
  };
};

/** Stores links in one transaction; a (service, shortcode) already stored is skipped. */
export async function writeShortLinks(
  context: SourceContext,
  links: ShortLink[],
  discoveredAt: number,
): Promise<{ added: number; duplicates: number }> {
  if (links.length === 0) return { added: 0, duplicates: 0 };
  const added = await writeRows(shortLinkDb(context), context.engine, {
    table: 'short_links',
    rows: links.map((link) => rowOf(link, discoveredAt)),
    conflict: ['service', 'shortcode'],
    statements: slices(ROWS_PER_STATEMENT),
  });
  return { added, duplicates: links.length - added };
}
