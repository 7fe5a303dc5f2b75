import { sql, type SqlBool } from 'kysely';
import { validationError } from '../../../../lib/errors.ts';
import type { SourceContext } from '../../kit/source.ts';
import { leakDb } from './credential-store.ts';
import { countDistinct, readDistinct } from './distinct-view.ts';
import { findFilterCounts, urlContains } from './leak-filters.ts';
import { parseLeakTarget } from './leak-target.ts';
import { maskPassword } from './credential.ts';
import { isoDateOrNull as iso } from '../../../../lib/iso-date.ts';

const NEWEST = 10;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

interface SightingRow {
  login: string;
  url: string | null;
  host: string | null;
  password_sealed: string;
  software: string | null;
  country: string | null;
  leaked_at: number | null;
  discovered_at: number;
  leak_name: string;
  leak_type: string;
}

interface AccountQuery {
  login?: string;
  domain?: string;
  url?: string;
  password_sha1_prefix?: string;
}

/** The accounts search's conditions on sightings and on their groups; refuses a query too broad to answer. */
function accountFilter(query: AccountQuery) {
  if (!query.login && !query.domain && !query.url && !query.password_sha1_prefix) {
    throw validationError('login', 'give at least one of login, domain, url, password_sha1_prefix');
  }
  if (query.url && !query.login && !query.domain && !query.password_sha1_prefix) {
    // A URL part alone would read every credential; with another field it narrows an index read.
    throw validationError('url', 'combine url with login, domain or password_sha1_prefix');
  }
  const conditions: ReturnType<typeof sql<SqlBool>>[] = [];
  if (query.login) conditions.push(sql<SqlBool>`c.login_key = ${query.login.toLowerCase()}`);
  if (query.domain)
    conditions.push(
      sql<SqlBool>`(c.domain = ${query.domain.toLowerCase()} or c.login_domain = ${query.domain.toLowerCase()})`,
    );
  if (query.password_sha1_prefix)
    conditions.push(sql<SqlBool>`c.password_sha1_prefix = ${query.password_sha1_prefix.toLowerCase()}`);
  // A URL narrows the groups, not their sightings: a group is whole or not there.
  const having = query.url
    ? sql<SqlBool>`max(case when ${urlContains('c.url', query.url)} then 1 else 0 end) = 1`
    : undefined;
  return { where: sql.join(conditions, sql` and `), having };
}

/**
 * Read-only questions over the credential store for the quick-search endpoints
 * (docs/api.md "Quick searches"). Passwords leave here masked, never in clear.
 */
export function createLeakQueries(context: SourceContext) {
  const db = leakDb(context);
  const masked = (sealed: string) => maskPassword(context.keys.decryptSecret(sealed));

  const sighting = (row: SightingRow) => ({
    login: row.login,
    url: row.url,
    host: row.host,
    password: masked(row.password_sealed),
    software: row.software,
    country: row.country,
    leak_name: row.leak_name,
    leak_type: row.leak_type,
    leaked_at: iso(row.leaked_at),
    discovered_at: iso(row.discovered_at)!,
  });

  const sightings = (where: ReturnType<typeof sql<SqlBool>>, limit: number) =>
    sql<SightingRow>`select c.login, c.url, c.host, c.password_sealed, c.software, c.country, c.leaked_at, c.discovered_at,
        l.name as leak_name, l.kind as leak_type
      from leak_credentials c join leak_files l on l.id = c.leak_id where ${where}
      order by c.discovered_at desc, c.id desc limit ${limit}`
      .execute(db)
      .then((r) => r.rows.map(sighting));

  return {
    /** What is known of a domain: sightings by leak type and by filter, distinct credentials, newest sightings. */
    async domain(input: string) {
      const target = parseLeakTarget(input);
      if (!target) throw validationError('domain', 'must be a domain with a registrable name (e.g. acme-bank.com)');
      const { domain } = target;
      const about = sql<SqlBool>`(c.domain = ${domain} or c.login_domain = ${domain})`;
      const [byType, distinct, newest, byFilter] = await Promise.all([
        sql<{
          leak_type: string;
          count: number;
          leaks: number;
        }>`select l.kind as leak_type, count(*) as count, count(distinct c.leak_id) as leaks
          from leak_credentials c join leak_files l on l.id = c.leak_id where ${about} group by l.kind order by l.kind`.execute(
          db,
        ),
        countDistinct(db, about),
        sightings(about, NEWEST),
        findFilterCounts(db, domain),
      ]);
      const types = byType.rows.map((row) => ({
        leak_type: row.leak_type,
        sightings: Number(row.count),
        leaks: Number(row.leaks),
      }));
      const totalSightings = types.reduce((n, row) => n + row.sightings, 0);
      return {
        domain,
        total_sightings: totalSightings,
        distinct_credentials: distinct,
        by_source: [
          { source: 'filtered_leak', count: totalSightings },
          { source: 'distinct_leak', count: distinct },
        ],
        by_leak_type: types,
        by_filter: byFilter,
        newest,
      };
    },

    /** One address: in which leaks, when, on which sites. */
    async email(input: string) {
      const email = input.trim().toLowerCase();
      if (!EMAIL.test(email)) throw validationError('email', 'must be an email address');
      const [leaks, sites, newest] = await Promise.all([
        sql<{ leak_name: string; leak_type: string; sightings: number; first_seen: number; last_seen: number }>`
          select l.name as leak_name, l.kind as leak_type, count(*) as sightings, min(c.discovered_at) as first_seen, max(c.discovered_at) as last_seen
          from leak_credentials c join leak_files l on l.id = c.leak_id where c.login_key = ${email}
          group by l.name, l.kind order by max(c.discovered_at) desc, l.name`.execute(db),
        sql<{ host: string; sightings: number }>`select c.host, count(*) as sightings from leak_credentials c
          where c.login_key = ${email} and c.host is not null group by c.host order by count(*) desc, c.host limit 100`.execute(
          db,
        ),
        sightings(sql<SqlBool>`c.login_key = ${email}`, 50),
      ]);
      return {
        email,
        total_sightings: leaks.rows.reduce((n, row) => n + Number(row.sightings), 0),
        leaks: leaks.rows.map((row) => ({
          ...row,
          sightings: Number(row.sightings),
          first_seen: iso(row.first_seen)!,
          last_seen: iso(row.last_seen)!,
        })),
        sites: sites.rows.map((row) => ({ host: row.host, sightings: Number(row.sightings) })),
        newest,
      };
    },

    /** A page of distinct credentials matching every given field. */
    async accounts(query: AccountQuery, page: { offset: number; limit: number }) {
      const { where, having } = accountFilter(query);
      const { rows, total } = await readDistinct(db, { where, having, limit: page.limit, offset: page.offset });
      return {
        total,
        results: rows.map((row) => ({
          login: row.login,
          email: row.email,
          domain: row.domain,
          login_domain: row.login_domain,
          url: row.url,
          password: masked(row.password_sealed),
          password_type: row.hash_type ? 'hash' : 'plain',
          hash_type: row.hash_type,
          occurrences: Number(row.sources),
          first_seen: iso(row.first_seen)!,
          last_seen: iso(row.last_seen)!,
        })),
      };
    },
  };
}

export type LeakQueries = ReturnType<typeof createLeakQueries>;
