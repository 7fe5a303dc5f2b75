import type { ArgError } from '../kit/args-validation.ts';
import { parseDomainName, type DomainName } from '../common/domains/domain-name.ts';
import type { SourceDefinition } from '../kit/source.ts';
import { loadDemoLinks } from './demo-links.ts';
import { urlShortenerIngester } from './short-link-ingest.ts';
import { matchShortLinks } from './short-link-match.ts';
import { shortLinkMigrations } from './short-link-store.ts';

interface UrlShortenerArgs {
  domain: string;
  services?: string[];
  path_contains?: string;
}

const hostOf = (name: DomainName) => name.domain.replace(/^www\./, '');

function checkUrlShortenerArgs(args: Record<string, unknown>): ArgError[] {
  const { domain, services = [] } = args as unknown as UrlShortenerArgs;
  const errors: ArgError[] = [];
  const name = parseDomainName(domain);
  if (typeof name === 'string') errors.push({ field: 'args.domain', message: `must be a domain name such as acme-bank.com (${name})`, rule: 3 });
  services.forEach((service, index) => {
    if (typeof parseDomainName(service) === 'string') errors.push({ field: `args.services[${index}]`, message: 'must be a shortener host name such as bit.ly', rule: 3 });
  });
  return errors;
}

/**
 * URL shortener (id 15): short links whose target is on the watched domain or a host under it,
 * from URLTeam dumps of shortener services (`shortcode|long_url` lines). Dumps are released in
 * batches, so the floor is weekly; docs/sources.md lists the hit fields.
 */
export const urlShortenerSource: SourceDefinition = {
  id: 15,
  name: 'url_shortener',
  alias: 'URL shorteners',
  description: 'Shortened links whose target URL is on the watched domain, from crawls of URL-shortener services.',
  serviceType: 'sync',
  frequency: 'weekly',
  params: [
    { name: 'domain', type: 'String', required: true, hint: "Domain looked for as the target URLs' host; subdomains included", example: 'acme-bank.com' },
    { name: 'services', type: 'Array[String]', required: false, hint: 'Only these shortener services (host names)', example: ['bit.ly', 'v.gd'] },
    { name: 'path_contains', type: 'String', required: false, hint: "Only targets whose URL path contains this text (any case)", example: '/login' },
  ],
  excludableFields: ['short_url', 'service', 'target_host', 'target_domain'],
  filterableFields: ['service', 'target_host', 'target_domain'],
  sortableFields: ['discovered_at', 'crawled_at', 'service', 'target_host'],
  hasData: true,
  checkArgs: checkUrlShortenerArgs,
  match(context, rawArgs, window, limit) {
    const args = rawArgs as unknown as UrlShortenerArgs;
    const domain = parseDomainName(args.domain);
    // checkArgs refuses such a rule now; one stored before this source had data finds nothing.
    if (typeof domain === 'string') return Promise.resolve({ hits: [], total: 0 });
    const services = args.services?.flatMap((service) => {
      const name = parseDomainName(service);
      return typeof name === 'string' ? [] : [hostOf(name)];
    });
    return matchShortLinks(context, { domain, services, pathContains: args.path_contains?.toLowerCase() }, window, limit);
  },
  migrations: shortLinkMigrations,
  ingesters: [urlShortenerIngester],
  async demo(context, now) {
    const added = await loadDemoLinks(context, now);
    return `Demo short links: ${added} synthetic URL-shortener links added (try url_shortener with domain "acme-bank.com")`;
  },
};
