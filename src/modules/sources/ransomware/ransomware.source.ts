import { sourceWithoutData } from '../source.ts';

/**
 * Ransomware (id 10): victim posts on ransomware groups' leak sites (ransomware.live /
 * ransomwatch posts), matched on the victim name, website or description.
 *
 * Hit data: group, victim (post_title), website, country, activity (sector), description,
 * post_url, published_at, discovered_at.
 */
export const ransomwareSource = sourceWithoutData({
  id: 10,
  name: 'ransomware',
  alias: 'Ransomware leak sites',
  description: "Victim posts on ransomware groups' leak sites that name the watched organization or domain.",
  serviceType: 'sync',
  frequency: 'daily',
  params: [
    { name: 'query', type: 'String', required: true, hint: 'Organization name or domain looked for in the victim name, website and description', example: 'Acme Bank' },
    { name: 'groups', type: 'Array[String]', required: false, hint: 'Only posts of these groups (ransomware.live group names)', example: ['lockbit3', 'alphv'] },
    { name: 'countries', type: 'Array[String]', required: false, hint: 'Only victims in these countries (ISO 3166-1 alpha-2 codes)', example: ['US', 'DE'] },
  ],
  excludableFields: ['group', 'victim', 'website'],
  filterableFields: ['group', 'country', 'activity'],
  sortableFields: ['published_at', 'discovered_at', 'group', 'victim'],
});
