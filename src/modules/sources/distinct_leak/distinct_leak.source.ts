import { sql, type SqlBool } from 'kysely';
import { credentialStoreMigrations, leakDb, openPassword, passwordFields } from '../common/leaks/credential-store.ts';
import { readDistinct } from '../common/leaks/distinct-view.ts';
import { parseLeakTarget } from '../common/leaks/leak-target.ts';
import type { ArgError } from '../kit/args-validation.ts';
import type { MatchResult, MatchWindow, SourceContext, SourceDefinition } from '../kit/source.ts';

/**
 * Distinct leak (id 5): the deduplicated view of the credential store (leaks/distinct-view.ts),
 * one row per (login, site domain, password). A run reports the credentials that became known in the window
 * (first seen in (last_run, now]); a credential seen again in a later leak is a re-sighting:
 * it raises `occurrences` and `last_seen` but is not reported again.
 *
 * Hit data: login, email, username, domain, login_domain, url, password (masked), password_type
 * (plain or hash), hash_type, occurrences (leaks it was seen in), first_seen, last_seen.
 */
interface DistinctLeakArgs {
  query: string;
  query_type: 'domain' | 'email' | 'username';
  include_hashed?: boolean;
}

const iso = (ms: number) => new Date(Number(ms)).toISOString();

function checkArgs(args: Record<string, unknown>): ArgError[] {
  const query = args.query as string;
  if (args.query_type === 'domain' && !parseLeakTarget(query)) return [{ field: 'args.query', message: 'must be a domain (e.g. acme-bank.com) for query_type domain', rule: 3 }];
  if (args.query_type === 'email' && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(query)) return [{ field: 'args.query', message: 'must be an email address for query_type email', rule: 3 }];
  return [];
}

function subject(args: DistinctLeakArgs) {
  const query = args.query.trim().toLowerCase();
  if (args.query_type !== 'domain') return sql<SqlBool>`c.login_key = ${query}`;
  const domain = parseLeakTarget(query)!.domain;
  return sql<SqlBool>`(c.domain = ${domain} or c.login_domain = ${domain})`;
}

async function match(context: SourceContext, rawArgs: Record<string, unknown>, window: MatchWindow, limit: number): Promise<MatchResult> {
  const args = rawArgs as unknown as DistinctLeakArgs;
  const conditions = [subject(args), sql<SqlBool>`c.discovered_at <= ${window.until}`];
  if (!args.include_hashed) conditions.push(sql<SqlBool>`c.hash_type is null`);
  // spec 3.3.3 for a deduplicated source: a credential is new when its first sighting is.
  const having = window.since === null ? undefined : sql<SqlBool>`min(c.discovered_at) > ${window.since}`;
  const { rows, total } = await readDistinct(leakDb(context), { where: sql.join(conditions, sql` and `), having, limit });
  return {
    total,
    hits: rows.map((row) => ({
      key: `distinct:${row.first_id}`,
      date: Number(row.first_seen),
      data: {
        login: row.login,
        email: row.email,
        username: row.email ? null : row.login,
        domain: row.domain,
        login_domain: row.login_domain,
        url: row.url,
        ...passwordFields(context, row.password_sealed),
        password_type: row.hash_type ? 'hash' : 'plain',
        hash_type: row.hash_type,
        occurrences: Number(row.sources),
        first_seen: iso(row.first_seen),
        last_seen: iso(row.last_seen),
      },
    })),
  };
}

export const distinctLeakSource: SourceDefinition = {
  id: 5,
  name: 'distinct_leak',
  alias: 'Distinct leak',
  description: 'Deduplicated leaked credentials for a domain, email or username, each distinct credential reported once when first seen.',
  serviceType: 'sync',
  frequency: 'twice_weekly',
  params: [
    { name: 'query', type: 'String', required: true, hint: 'Domain, email address or username to watch', example: 'acme-bank.com' },
    { name: 'query_type', type: 'String', required: true, hint: 'What the query is: a domain matches the site and email logins at it', example: 'domain', valid_values: ['domain', 'email', 'username'] },
    { name: 'include_hashed', type: 'Boolean', required: false, hint: 'Also report credentials whose password is only a hash (off by default)', example: true },
  ],
  excludableFields: ['login', 'email', 'username', 'domain'],
  filterableFields: ['domain', 'login_domain', 'password_type', 'hash_type'],
  sortableFields: ['first_seen', 'last_seen', 'occurrences', 'login'],
  hasData: true,
  checkArgs,
  match,
  presentHit: openPassword,
  // The credential store is filled by `dragnet ingest filtered_leak` and its demo data.
  migrations: credentialStoreMigrations,
};
