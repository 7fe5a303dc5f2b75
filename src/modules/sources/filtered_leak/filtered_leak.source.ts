import { sourceWithoutData } from '../source.ts';

/**
 * Filtered credential leaks (id 3, spec 2.9 schema): credential records (combo lists, stealer
 * logs, breach dumps) tied to one domain or URL, narrowed by a filter:
 *   1 emails            - any credential whose email address is on the domain
 *   2 corporate logins  - credentials on the domain's own URLs whose login is on the domain (staff)
 *   3 customer logins   - credentials on the domain's URLs whose login is not on the domain
 *   4 URLs              - every credential whose URL is on the domain, whatever the login
 * `filter_parameters` narrows further: each entry must occur in the login or the URL.
 *
 * Hit data: email, username, password (masked), url, domain, leak_name, leak_type, filter_id,
 * leaked_at, discovered_at.
 */
export const FILTER_IDS = { emails: 1, corporate_logins: 2, customer_logins: 3, urls: 4 } as const;

export const filteredLeakSource = sourceWithoutData({
  id: 3,
  name: 'filtered_leak',
  alias: 'Filtered credential leaks',
  description: 'Leaked credentials tied to a domain or URL, filtered to employee emails, corporate logins, customer logins or URLs.',
  serviceType: 'sync',
  frequency: 'daily',
  params: [
    { name: 'domain_url', type: 'String', required: true, hint: 'Domain or URL whose credentials to watch; subdomains included', example: 'acme-bank.com' },
    {
      name: 'filter_id',
      type: 'Int',
      required: true,
      hint: '1 emails on the domain, 2 corporate logins (staff on its URLs), 3 customer logins (others on its URLs), 4 any credential for its URLs',
      example: 2,
      valid_values: [1, 2, 3, 4],
    },
    { name: 'filter_parameters', type: 'Array[String]', required: false, hint: 'Extra terms; each must occur in the login or the URL (e.g. a URL path or an email prefix)', example: ['/login', 'vpn.'] },
  ],
  excludableFields: ['email', 'username', 'url', 'leak_name'],
  filterableFields: ['domain', 'leak_name', 'leak_type', 'filter_id'],
  sortableFields: ['discovered_at', 'leaked_at', 'email', 'domain'],
});
