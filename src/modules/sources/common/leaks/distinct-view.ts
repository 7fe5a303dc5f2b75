import { sql, type QueryExecutorProvider, type RawBuilder } from 'kysely';

/**
 * The distinct view of the credential store: one row per (lower-cased login, site domain,
 * password), grouped from the sightings that `where` selects (through the login or domain
 * indexes), with its first and last sighting and the number of leak files it was seen in. A
 * `where` that names a login or a domain selects every sighting of each group it touches (a
 * group's sightings share the login and the site), so the figures are whole.
 */
export interface DistinctRow {
  first_id: number;
  login: string;
  email: string | null;
  domain: string | null;
  login_domain: string | null;
  url: string | null;
  password_sealed: string;
  hash_type: string | null;
  sources: number;
  first_seen: number;
  last_seen: number;
}

const grouped = (where: RawBuilder<unknown>, having: RawBuilder<unknown> | null) => sql`
  select c.login_key, min(c.id) as first_id, min(c.discovered_at) as first_seen, max(c.discovered_at) as last_seen, count(distinct c.leak_id) as sources
  from leak_credentials c where ${where}
  group by c.login_key, coalesce(c.domain, c.login_domain, ''), c.password_hash
  ${having ? sql`having ${having}` : sql``}`;

/** How many groups `where` (and `having`) select. */
export async function countDistinct(
  db: QueryExecutorProvider,
  where: RawBuilder<unknown>,
  having?: RawBuilder<unknown>,
): Promise<number> {
  const { rows } = await sql<{
    total: number;
  }>`select count(*) as total from (${grouped(where, having ?? null)}) g`.execute(db);
  return Number(rows[0]!.total);
}

/** Groups newest first (by first sighting), a page of them, and how many there are in all. */
export async function readDistinct(
  db: QueryExecutorProvider,
  options: { where: RawBuilder<unknown>; having?: RawBuilder<unknown>; limit: number; offset?: number },
): Promise<{ rows: DistinctRow[]; total: number }> {
  const groups = grouped(options.where, options.having ?? null);
  const [page, total] = await Promise.all([
    sql<DistinctRow>`with g as (${groups})
      select g.first_id, g.login_key as login, r.email, coalesce(r.domain, r.login_domain) as domain, r.login_domain, r.url, r.password_sealed, r.hash_type,
        g.sources, g.first_seen, g.last_seen
      from g join leak_credentials r on r.id = g.first_id
      order by g.first_seen desc, g.first_id desc limit ${options.limit} offset ${options.offset ?? 0}`.execute(db),
    countDistinct(db, options.where, options.having),
  ]);
  return { rows: page.rows, total };
}
