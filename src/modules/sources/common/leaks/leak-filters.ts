import { Type, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { sql, type Expression, type QueryExecutorProvider, type SqlBool } from 'kysely';
import { likeContains, likeEndsWith } from '../../../../db/like.ts';
import type { ArgError } from '../../kit/source.ts';
import type { LeakTarget } from './leak-target.ts';

/**
 * The filters of the filtered-leak source (`filter_id`, docs/sources.md "Filtered leak
 * filters"): which credentials of the watched domain a rule reports, and the schema of the
 * `filter_parameters` each one takes. Parameters always narrow: a credential is reported when
 * at least one of them occurs in its URL (case-insensitive).
 */
export interface LeakFilter {
  id: number;
  name: string;
  description: string;
  parameters: string;
  schema: TSchema;
}

const SITE_TERM = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: '^[A-Za-z0-9.-]+$',
  description: 'a host name or part of one',
});
const URL_TERM = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: '^\\S+$',
  description: 'a part of a URL without white space',
});
const terms = (term: TSchema) => Type.Array(term, { maxItems: 20 });

export const LEAK_FILTERS: LeakFilter[] = [
  {
    id: 1,
    name: 'employee_emails',
    description: 'Email logins at the domain (staff addresses), used on any site',
    parameters: 'site host names or parts of them (e.g. "okta.com", "vpn."): only credentials used on a matching site',
    schema: terms(SITE_TERM),
  },
  {
    id: 2,
    name: 'corporate_logins',
    description: "The domain's own sites, with a login at the domain (staff on internal systems)",
    parameters: 'URL parts (e.g. "/login", "vpn."): only credentials whose URL contains one',
    schema: terms(URL_TERM),
  },
  {
    id: 3,
    name: 'customer_accounts',
    description: "The domain's own sites, with a login not at the domain (customers' accounts)",
    parameters: 'URL parts (e.g. "/login", "shop."): only credentials whose URL contains one',
    schema: terms(URL_TERM),
  },
  {
    id: 4,
    name: 'all_site_credentials',
    description: "Every credential for the domain's sites, whatever the login",
    parameters: 'URL parts: only credentials whose URL contains one',
    schema: terms(URL_TERM),
  },
  {
    id: 5,
    name: 'admin_panels',
    description: "The domain's administration panels (wp-admin, cPanel, phpMyAdmin, /admin, hosting-panel ports …)",
    parameters: 'URL parts: only panels whose URL contains one',
    schema: terms(URL_TERM),
  },
];

export const FILTER_IDS = LEAK_FILTERS.map((filter) => filter.id);

export const findFilter = (id: number): LeakFilter | undefined => LEAK_FILTERS.find((filter) => filter.id === id);

/** `filter_parameters` against the schema of the chosen filter, as field errors. */
export function filterParameterErrors(filter: LeakFilter, parameters: unknown): ArgError[] {
  return [...Value.Errors(filter.schema, parameters)].map((error) => {
    const index = /^\/(\d+)/.exec(error.path);
    const field = index ? `args.filter_parameters[${index[1]}]` : 'args.filter_parameters';
    return {
      field,
      message: `${error.message} (filter ${filter.id} ${filter.name} takes ${filter.parameters})`,
      rule: 3,
    };
  });
}

type Where = Expression<SqlBool>;

/** A URL column contains the text, case-insensitively on both engines. */
export const urlContains = (column: string, text: string) =>
  likeContains(sql`lower(${sql.ref(column)})`, text.toLowerCase());

/** The filter's predicate over leak_credentials `c` for one target. */
export function filterConditions(filterId: number, target: LeakTarget): Where[] {
  const onSite: Where[] = [sql<SqlBool>`c.domain = ${target.domain}`];
  if (target.host)
    onSite.push(sql<SqlBool>`(c.host = ${target.host} or ${likeEndsWith(sql`c.host`, `.${target.host}`)})`);
  if (target.path) onSite.push(urlContains('c.url', target.path));
  const loginAtDomain = sql<SqlBool>`c.login_domain = ${target.domain}`;
  switch (filterId) {
    case 1: {
      const conditions: Where[] = [loginAtDomain];
      if (target.host)
        conditions.push(
          sql<SqlBool>`(c.login_host = ${target.host} or ${likeEndsWith(sql`c.login_host`, `.${target.host}`)})`,
        );
      return conditions;
    }
    case 2:
      return [...onSite, loginAtDomain];
    case 3:
      return [...onSite, sql<SqlBool>`(c.login_domain is null or c.login_domain <> ${target.domain})`];
    case 5:
      return [...onSite, sql<SqlBool>`c.url_kind = 'admin'`];
    default:
      return onSite;
  }
}

/** How many sightings of a domain each filter selects (the domain quick search). */
export async function findFilterCounts(db: QueryExecutorProvider, domain: string) {
  const target: LeakTarget = { domain, host: null, path: null };
  return Promise.all(
    LEAK_FILTERS.map(async (filter) => {
      const { rows } = await sql<{
        count: number;
      }>`select count(*) as count from leak_credentials c where ${sql.join(filterConditions(filter.id, target), sql` and `)}`.execute(
        db,
      );
      return { filter_id: filter.id, name: filter.name, count: Number(rows[0]!.count) };
    }),
  );
}
