import { sourceWithoutData } from '../source.ts';

/**
 * Paste site (id 12): public pastes (Pastebin scraping API and alike) whose content matches.
 *
 * Hit data: paste_key, site, title, syntax, user, size (bytes), url, expire (null when the
 * paste never expires), snippet (text around the match), date.
 */
export const pasteSiteSource = sourceWithoutData({
  id: 12,
  name: 'paste_site',
  alias: 'Paste sites',
  description: 'Public pastes on paste sites such as Pastebin whose content matches the watched terms.',
  serviceType: 'sync',
  frequency: 'daily',
  params: [
    { name: 'query', type: 'String', required: true, hint: 'Search query: terms, "phrases", AND, OR, NOT, ( )', example: 'acme-bank.com AND password' },
    { name: 'sites', type: 'Array[String]', required: false, hint: 'Only pastes of these sites', example: ['pastebin'], valid_values: ['pastebin', 'paste_ee', 'dpaste', 'rentry', 'ghostbin', 'gist'] },
    { name: 'syntaxes', type: 'Array[String]', required: false, hint: 'Only pastes with this syntax highlighting (e.g. text, sql, json, python)', example: ['text', 'sql'] },
  ],
  excludableFields: ['user', 'syntax', 'site'],
  filterableFields: ['site', 'syntax', 'user'],
  sortableFields: ['date', 'size', 'site'],
});
