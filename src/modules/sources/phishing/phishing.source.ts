import { sourceWithoutData } from '../source.ts';
import { phishingMigrations } from './observed-domains.ts';

/**
 * Phishing (id 8, spec 2.9 schema: exactly `domain`): lookalike domains of the watched domain
 * (dnstwist-style permutations) found among newly registered domains and DNS data.
 *
 * Hit data: domain, fuzzer (addition, bitsquatting, homoglyph, hyphenation, insertion, omission,
 * repetition, replacement, subdomain, transposition, vowel-swap, various, tld-swap, dictionary),
 * registered_at, registrar, ip, ipv6, name_servers, mx, has_mx, country, first_seen.
 */
export const phishingSource = sourceWithoutData({
  id: 8,
  name: 'phishing',
  alias: 'Phishing domains',
  description: 'Newly registered lookalike domains (typosquats, homoglyphs, TLD swaps) of a watched domain.',
  serviceType: 'sync',
  frequency: 'daily',
  params: [{ name: 'domain', type: 'String', required: true, hint: 'Registrable domain to protect, without scheme or path', example: 'acme-bank.com' }],
  excludableFields: ['domain', 'registrar', 'ip'],
  filterableFields: ['fuzzer', 'registrar', 'country', 'has_mx'],
  sortableFields: ['first_seen', 'registered_at', 'domain', 'fuzzer'],
  migrations: phishingMigrations,
});
