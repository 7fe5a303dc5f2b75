import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { sql, type SqlBool } from 'kysely';
import { credentialIngester } from '../common/leaks/credential-ingester.ts';
import {
  createCredentialWriter,
  credentialStoreMigrations,
  leakDb,
  hideSealedPassword,
  revealSealedPassword,
  passwordFields,
} from '../common/leaks/credential-store.ts';
import { generateCredentials } from '../common/leaks/demo-credentials.ts';
import {
  FILTER_IDS,
  filterConditions,
  filterParameterErrors,
  findFilter,
  LEAK_FILTERS,
  urlContains,
} from '../common/leaks/leak-filters.ts';
import { parseLeakTarget, type LeakTarget } from '../common/leaks/leak-target.ts';
import { oneOf } from '../kit/arg-params.ts';
import {
  defineSource,
  preparedOrErrors,
  type ArgError,
  type MatchResult,
  type MatchWindow,
  type SourceContext,
} from '../kit/source.ts';
import { isoDateOrNull as iso } from '../../../lib/iso-date.ts';
import { newestRecord } from '../kit/newest-record.ts';
import { filteredLeakStix } from './filtered-leak-stix.ts';

/**
 * Filtered credential leaks (id 3, spec 2.9 schema): credentials from stealer logs and
 * combolists tied to one domain or URL, narrowed by a filter (filters.ts). A run reports the
 * credentials Dragnet learned of in the window (last_run, now].
 *
 * Hit data: email, username, password (masked; the hits endpoint opens it for the rule's
 * organization), url, host, domain, login_domain, url_kind, software, country, os, leak_name,
 * leak_type, filter_id, leaked_at, discovered_at; and machine (the machine's folder in a stealer
 * log), hwid, app_id (the Android package of an android:// URL).
 */
/** A rule's credentials: the filter's over the target, narrowed to URLs containing one of the terms. */
interface FilteredLeakSearch {
  target: LeakTarget;
  filterId: number;
  terms: string[];
}

async function match(
  context: SourceContext,
  args: FilteredLeakSearch,
  window: MatchWindow,
  limit: number,
): Promise<MatchResult> {
  const conditions = filterConditions(args.filterId, args.target);
  const { terms } = args;
  if (terms.length)
    conditions.push(
      sql<SqlBool>`(${sql.join(
        terms.map((term) => urlContains('c.url', term)),
        sql` or `,
      )})`,
    );
  conditions.push(sql<SqlBool>`c.discovered_at <= ${window.until}`);
  if (window.since !== null) conditions.push(sql<SqlBool>`c.discovered_at > ${window.since}`);
  const where = sql.join(conditions, sql` and `);
  const db = leakDb(context);
  const { rows } = await sql<{
    id: number;
    login: string;
    email: string | null;
    url: string | null;
    host: string | null;
    domain: string | null;
    login_domain: string | null;
    url_kind: string | null;
    password_sealed: string;
    software: string | null;
    country: string | null;
    os: string | null;
    machine: string | null;
    hwid: string | null;
    app_id: string | null;
    leaked_at: number | null;
    discovered_at: number;
    leak_name: string;
    leak_type: string;
  }>`select c.id, c.login, c.email, c.url, c.host, c.domain, c.login_domain, c.url_kind, c.password_sealed, c.software, c.country, c.os,
      c.machine, c.hwid, c.app_id, c.leaked_at, c.discovered_at, l.name as leak_name, l.kind as leak_type
    from leak_credentials c join leak_files l on l.id = c.leak_id
    where ${where} order by c.discovered_at desc, c.id desc limit ${limit}`.execute(db);
  const { rows: counted } = await sql<{
    total: number;
  }>`select count(*) as total from leak_credentials c where ${where}`.execute(db);
  return {
    total: Number(counted[0]!.total),
    hits: rows.map((row) => ({
      key: `credential:${row.id}`,
      date: Number(row.discovered_at),
      data: {
        email: row.email,
        username: row.email ? null : row.login,
        ...passwordFields(context, row.password_sealed),
        url: row.url,
        host: row.host,
        domain: row.domain,
        login_domain: row.login_domain,
        url_kind: row.url_kind,
        software: row.software,
        country: row.country,
        os: row.os,
        leak_name: row.leak_name,
        leak_type: row.leak_type,
        machine: row.machine,
        hwid: row.hwid,
        app_id: row.app_id,
        filter_id: args.filterId,
        leaked_at: iso(row.leaked_at),
        discovered_at: iso(row.discovered_at),
      },
    })),
  };
}

export const filteredLeakSource = defineSource({
  stix: filteredLeakStix,
  id: 3,
  name: 'filtered_leak',
  alias: 'Filtered credential leaks',
  description:
    'Leaked credentials tied to a domain or URL, filtered to employee emails, corporate logins, customer accounts, site credentials or admin panels.',
  serviceType: 'sync',
  frequency: 'daily',
  args: Type.Object({
    domain_url: Type.String({
      description: 'Domain or URL whose credentials to watch; subdomains included',
      examples: ['acme-bank.com'],
    }),
    filter_id: oneOf(FILTER_IDS, {
      description: LEAK_FILTERS.map((filter) => `${filter.id} ${filter.name}: ${filter.description}`).join('; '),
      examples: [2],
    }),
    filter_parameters: Type.Optional(
      Type.Array(Type.String(), {
        description:
          'Narrow the filter: a credential is reported when one of these occurs in its URL (e.g. a path or a subdomain); filter 1 takes site host names',
        examples: [['/login', 'vpn.']],
      }),
    ),
  }),
  excludableFields: ['email', 'username', 'url', 'host', 'leak_name', 'machine', 'hwid', 'app_id'],
  filterableFields: [
    'domain',
    'host',
    'login_domain',
    'url_kind',
    'country',
    'software',
    'leak_name',
    'leak_type',
    'machine',
    'hwid',
    'app_id',
    'filter_id',
  ],
  sortableFields: ['discovered_at', 'leaked_at', 'email', 'domain', 'host'],
  hasData: true,
  newestRecordAt: newestRecord('leak_files', 'ingested_at'),
  prepare(args) {
    const errors: ArgError[] = [];
    const target = parseLeakTarget(args.domain_url);
    if (!target) {
      errors.push({
        field: 'args.domain_url',
        message:
          'must be a domain or URL with a registrable domain (e.g. acme-bank.com or https://vpn.acme-bank.com/login)',
        rule: 3,
      });
    }
    const filter = findFilter(args.filter_id);
    if (filter && args.filter_parameters !== undefined)
      errors.push(...filterParameterErrors(filter, args.filter_parameters));
    return preparedOrErrors(errors, () => ({
      target: target!,
      filterId: args.filter_id,
      terms: args.filter_parameters ?? [],
    }));
  },
  match,
  presentHit: hideSealedPassword,
  revealHit: revealSealedPassword,
  migrations: credentialStoreMigrations,
  ingesters: [credentialIngester('filtered_leak')],
  async demo(context) {
    const writer = createCredentialWriter(context);
    // Known by a fixed "content hash", so a second demo adds nothing.
    const leak = await writer.open(
      createHash('sha256').update('dragnet demo stealer logs v1').digest('hex'),
      'demo-stealer-logs',
      'stealer_log',
    );
    if (leak.complete) return 'Demo credentials: already loaded';
    // The catalog example (acme-bank.com, filter 2, /login or vpn.) must find staff on the VPN.
    const staff = [
      {
        url: 'https://vpn.acme-bank.com/login',
        login: 'j.doe@acme-bank.com',
        password: 'Autumn2026!',
        software: 'Google_[Chrome]_Default',
        machine: { country: 'US', os: 'Windows 10 Pro x64', infectedAt: null },
      },
      {
        url: 'https://portal.acme-bank.com/wp-admin/',
        login: 'admin@acme-bank.com',
        password: 'Acme#Admin77',
        software: 'Edge_Default',
        machine: { country: 'DE', os: 'Windows 11 Pro x64', infectedAt: null },
      },
    ];
    const records = [...staff, ...generateCredentials({ seed: 2026, count: 400 })];
    const added = await writer.write(leak, records, records.length);
    await writer.finish(leak);
    return `Demo credentials: ${added} added (try a filtered_leak rule on acme-bank.com)`;
  },
});
