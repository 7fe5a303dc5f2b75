import { Type } from '@sinclair/typebox';
import { defineSource } from '../kit/source.ts';
import { loadDemoDomains } from './demo-domains.ts';
import { parseDomainName } from '../common/domains/domain-name.ts';
import { phishingMigrations } from '../common/domains/observed-domains.ts';
import { phishingIngester } from './phishing-ingest.ts';
import { matchPhishing, matchPhishingMany } from './phishing-match.ts';
import { newestRecord } from '../kit/newest-record.ts';
import { phishingStix } from './phishing-stix.ts';

/**
 * Phishing (id 8, spec 2.9 schema: exactly `domain`): newly observed domains (NRD lists, dnstwist
 * scans, certificate names) that are lookalikes of the watched domain: its dnstwist permutations,
 * the brand inside another name, IDN homoglyphs. lookalike-index.ts explains the matching,
 * docs/sources.md lists the hit fields.
 */
export const phishingSource = defineSource({
  stix: phishingStix,
  id: 8,
  name: 'phishing',
  alias: 'Phishing domains',
  description:
    'Newly registered lookalike domains (typosquats, homoglyphs, TLD swaps, brand plus keyword) of a watched domain.',
  serviceType: 'sync',
  frequency: 'daily',
  args: Type.Object({
    domain: Type.String({
      description: 'Registrable domain to protect, without scheme, path or subdomain',
      examples: ['acme-bank.com'],
    }),
  }),
  excludableFields: ['domain', 'registrable', 'registrar', 'ip', 'country'],
  filterableFields: ['fuzzer', 'registrar', 'country', 'has_mx', 'origin', 'brand_in_subdomain'],
  sortableFields: ['score', 'distance', 'first_seen', 'registered_at', 'discovered_at', 'domain', 'fuzzer'],
  hasData: true,
  newestRecordAt: newestRecord('observed_domains', 'discovered_at'),
  prepare({ domain }) {
    const name = parseDomainName(domain);
    if (typeof name === 'string')
      return {
        errors: [{ field: 'args.domain', message: `must be a domain name such as acme-bank.com (${name})`, rule: 3 }],
      };
    if (name.domain !== name.registrable) {
      return {
        errors: [
          {
            field: 'args.domain',
            message: `must be a registrable domain: ${name.registrable}, not ${name.domain} (its subdomains are covered)`,
            rule: 3,
          },
        ],
      };
    }
    return { value: domain };
  },
  match: matchPhishing,
  matchMany: matchPhishingMany,
  migrations: phishingMigrations,
  ingesters: [phishingIngester],
  async demo(context, now) {
    const added = await loadDemoDomains(context, now);
    return `Demo domains: ${added} newly observed domains added (try phishing with domain "acme-bank.com")`;
  },
});
