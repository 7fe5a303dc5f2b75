import { Type } from '@sinclair/typebox';
import { sql, type SqlBool } from 'kysely';
import {
  credentialStoreMigrations,
  leakDb,
  hideSealedPassword,
  revealSealedPassword,
  passwordFields,
} from '../common/leaks/credential-store.ts';
import { readDistinct } from '../common/leaks/distinct-view.ts';
import { parseLeakTarget } from '../common/leaks/leak-target.ts';
import { oneOf } from '../kit/arg-params.ts';
import { defineSource, type MatchResult, type MatchWindow, type SourceContext } from '../kit/source.ts';
import { isoDate as iso } from '../../../lib/iso-date.ts';
import { newestRecord } from '../kit/newest-record.ts';
import { distinctLeakStix } from './distinct-leak-stix.ts';

/**
 * Distinct leak (id 5): the deduplicated view of the credential store (leaks/distinct-view.ts),
 * one row per (login, site domain, password). A run reports the credentials that became known in the window
 * (first seen in (last_run, now]); a credential seen again in a later leak is a re-sighting:
 * it raises `occurrences` and `last_seen` but is not reported again.
 *
 * Hit data: login, email, username, domain, login_domain, url, password (masked), password_type
 * (plain or hash), hash_type, occurrences (leaks it was seen in), first_seen, last_seen.
 */
/** Whose credentials a rule watches: a domain (its sites and logins at it), or one login. */
interface DistinctLeakSubject {
  domain: string | null;
  login: string;
  includeHashed: boolean;
}

function subject(args: DistinctLeakSubject) {
  if (args.domain === null) return sql<SqlBool>`c.login_key = ${args.login}`;
  return sql<SqlBool>`(c.domain = ${args.domain} or c.login_domain = ${args.domain})`;
}

async function match(
  context: SourceContext,
  args: DistinctLeakSubject,
  window: MatchWindow,
  limit: number,
): Promise<MatchResult> {
  const conditions = [subject(args), sql<SqlBool>`c.discovered_at <= ${window.until}`];
  if (!args.includeHashed) conditions.push(sql<SqlBool>`c.hash_type is null`);
  // spec 3.3.3 for a deduplicated source: a credential is new when its first sighting is.
  const having = window.since === null ? undefined : sql<SqlBool>`min(c.discovered_at) > ${window.since}`;
  const { rows, total } = await readDistinct(leakDb(context), {
    where: sql.join(conditions, sql` and `),
    having,
    limit,
  });
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

export const distinctLeakSource = defineSource({
  stix: distinctLeakStix,
  id: 5,
  name: 'distinct_leak',
  alias: 'Distinct leak',
  description:
    'Deduplicated leaked credentials for a domain, email or username, each distinct credential reported once when first seen.',
  serviceType: 'sync',
  frequency: 'twice_weekly',
  args: Type.Object({
    query: Type.String({ description: 'Domain, email address or username to watch', examples: ['acme-bank.com'] }),
    query_type: oneOf(['domain', 'email', 'username'], {
      description: 'What the query is: a domain matches the site and email logins at it',
      examples: ['domain'],
    }),
    include_hashed: Type.Optional(
      Type.Boolean({
        description: 'Also report credentials whose password is only a hash (off by default)',
        examples: [true],
      }),
    ),
  }),
  excludableFields: ['login', 'email', 'username', 'domain'],
  filterableFields: ['domain', 'login_domain', 'password_type', 'hash_type'],
  sortableFields: ['first_seen', 'last_seen', 'occurrences', 'login'],
  hasData: true,
  newestRecordAt: newestRecord('leak_files', 'ingested_at'),
  prepare(args) {
    const login = args.query.toLowerCase();
    const includeHashed = Boolean(args.include_hashed);
    if (args.query_type === 'domain') {
      const target = parseLeakTarget(login);
      if (!target)
        return {
          errors: [
            { field: 'args.query', message: 'must be a domain (e.g. acme-bank.com) for query_type domain', rule: 3 },
          ],
        };
      return { value: { domain: target.domain, login, includeHashed } };
    }
    if (args.query_type === 'email' && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(login))
      return { errors: [{ field: 'args.query', message: 'must be an email address for query_type email', rule: 3 }] };
    return { value: { domain: null, login, includeHashed } };
  },
  match,
  presentHit: hideSealedPassword,
  revealHit: revealSealedPassword,
  // The credential store is filled by `dragnet ingest filtered_leak` and its demo data.
  migrations: credentialStoreMigrations,
});
