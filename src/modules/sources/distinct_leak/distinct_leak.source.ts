import { sourceWithoutData } from '../source.ts';

/**
 * Distinct leak (id 5): deduplicated credentials. Each distinct (login, password) pair is
 * reported once, on its first appearance in any leak, with the leaks it has been seen in since.
 * Deduplication is recomputed in batches, so the floor is twice weekly.
 *
 * Hit data: login, email, username, domain, password (masked), password_type, hash_type,
 * leak_names, occurrences, first_seen, last_seen.
 */
export const distinctLeakSource = sourceWithoutData({
  id: 5,
  name: 'distinct_leak',
  alias: 'Distinct leak',
  description: 'Deduplicated leaked credentials for a domain, email or username, each distinct credential reported once when first seen.',
  serviceType: 'sync',
  frequency: 'twice_weekly',
  params: [
    { name: 'query', type: 'String', required: true, hint: 'Domain, email address, username or phone number to watch', example: 'acme-bank.com' },
    { name: 'query_type', type: 'String', required: true, hint: 'What the query is', example: 'domain', valid_values: ['domain', 'email', 'username', 'phone'] },
    { name: 'include_hashed', type: 'Boolean', required: false, hint: 'Also report credentials whose password is only a hash (off by default)', example: true },
  ],
  excludableFields: ['login', 'email', 'username', 'domain'],
  filterableFields: ['domain', 'password_type', 'hash_type'],
  sortableFields: ['first_seen', 'last_seen', 'occurrences', 'login'],
});
