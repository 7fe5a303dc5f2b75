import { Type } from '@sinclair/typebox';
import type { ArgError } from '../kit/source.ts';
import { parseDomainName, type DomainName } from '../common/domains/domain-name.ts';
import { defineSource } from '../kit/source.ts';
import { loadDemoLinks } from './demo-links.ts';
import { urlShortenerIngester } from './short-link-ingest.ts';
import { matchShortLinks } from './short-link-match.ts';
import { shortLinkMigrations } from './short-link-store.ts';
import { lastStoredRecord } from '../kit/newest-record.ts';
import { urlShortenerStix } from './url-shortener-stix.ts';

const hostOf = (name: DomainName) => name.domain.replace(/^www\./, '');

/**
 * URL shortener (id 15): short links whose target is on the watched domain or a host under it,
 * from URLTeam dumps of shortener services (`shortcode|long_url` lines). Dumps are released in
 * batches, so the floor is weekly; docs/sources.md lists the hit fields.
 */
export const urlShortenerSource = defineSource({
  stix: urlShortenerStix,
  id: 15,
  name: 'url_shortener',
  alias: 'URL shorteners',
  description: 'Shortened links whose target URL is on the watched domain, from crawls of URL-shortener services.',
  serviceType: 'sync',
  frequency: 'weekly',
  args: Type.Object({
    domain: Type.String({
      description: "Domain looked for as the target URLs' host; subdomains included",
      examples: ['acme-bank.com'],
    }),
    services: Type.Optional(
      Type.Array(Type.String(), {
        description: 'Only these shortener services (host names)',
        examples: [['bit.ly', 'v.gd']],
      }),
    ),
    path_contains: Type.Optional(
      Type.String({ description: 'Only targets whose URL path contains this text (any case)', examples: ['/login'] }),
    ),
  }),
  excludableFields: ['short_url', 'service', 'target_host', 'target_domain'],
  filterableFields: ['service', 'target_host', 'target_domain'],
  sortableFields: ['discovered_at', 'crawled_at', 'service', 'target_host'],
  hasData: true,
  newestRecordAt: lastStoredRecord('short_links', 'discovered_at'),
  prepare(args) {
    const errors: ArgError[] = [];
    const domain = parseDomainName(args.domain);
    if (typeof domain === 'string')
      errors.push({
        field: 'args.domain',
        message: `must be a domain name such as acme-bank.com (${domain})`,
        rule: 3,
      });
    const services = args.services?.map((service, index) => {
      const name = parseDomainName(service);
      if (typeof name !== 'string') return hostOf(name);
      errors.push({
        field: `args.services[${index}]`,
        message: 'must be a shortener host name such as bit.ly',
        rule: 3,
      });
      return service;
    });
    if (typeof domain === 'string' || errors.length > 0) return { errors };
    return { value: { domain, services, pathContains: args.path_contains?.toLowerCase() } };
  },
  match: matchShortLinks,
  migrations: shortLinkMigrations,
  ingesters: [urlShortenerIngester],
  async demo(context, now) {
    const added = await loadDemoLinks(context, now);
    return `Demo short links: ${added} synthetic URL-shortener links added (try url_shortener with domain "acme-bank.com")`;
  },
});
