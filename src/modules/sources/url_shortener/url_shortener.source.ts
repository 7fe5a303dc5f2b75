import { sourceWithoutData } from '../source.ts';

/**
 * URL shortener (id 15): short links whose target is on the watched domain, from URLTeam-style
 * dumps of shortener services (`shortcode|long_url` lines). Dumps are released in batches,
 * so the floor is weekly.
 *
 * Hit data: short_url, shortcode, service, target_url, target_domain, discovered_at.
 */
export const urlShortenerSource = sourceWithoutData({
  id: 15,
  name: 'url_shortener',
  alias: 'URL shorteners',
  description: 'Shortened links whose target URL is on the watched domain, from crawls of URL-shortener services.',
  serviceType: 'sync',
  frequency: 'weekly',
  params: [
    { name: 'domain', type: 'String', required: true, hint: 'Domain looked for in the target URLs; subdomains included', example: 'acme-bank.com' },
    { name: 'services', type: 'Array[String]', required: false, hint: 'Only these shortener services (host names)', example: ['bit.ly', 'v.gd'] },
    { name: 'path_contains', type: 'String', required: false, hint: 'Only targets whose URL path contains this text', example: '/login' },
  ],
  excludableFields: ['short_url', 'service', 'target_domain'],
  filterableFields: ['service', 'target_domain'],
  sortableFields: ['discovered_at', 'service', 'target_domain'],
});
