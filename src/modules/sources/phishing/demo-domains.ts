import { DAY_MS } from '../../../lib/clock.ts';
import { seededRandom } from '../common/seeded-random.ts';
import type { SourceContext } from '../kit/source.ts';
import { parseDomainName } from '../common/domains/domain-name.ts';
import { writeObservedDomains, type CheckedDomain, type ObservedDomain } from '../common/domains/observed-domains.ts';

/**
 * Synthetic demo domains: two weeks of a newly-registered-domain feed made of invented names,
 * with lookalikes of the catalog example `acme-bank.com` among them (some with DNS data, as a
 * dnstwist scan reports it). Addresses are from the documentation ranges (RFC 5737, RFC 3849).
 */
const LOOKALIKES: Omit<ObservedDomain, 'origin'>[] = [
  {
    domain: 'acme-bnak.com',
    registrar: 'Example Registrar, Inc.',
    ip: '192.0.2.41',
    mx: ['mail.acme-bnak.com'],
    name_servers: ['ns1.example-dns.net'],
    country: 'Netherlands',
  },
  {
    domain: 'acrne-bank.com',
    registrar: 'Example Registrar, Inc.',
    ip: '192.0.2.77',
    name_servers: ['ns1.example-dns.net'],
    country: 'United States',
  },
  {
    domain: 'acme-bank-login.com',
    registrar: 'Demo Domains LLC',
    ip: '198.51.100.12',
    mx: ['mx.demo-mail.net'],
    country: 'Russia',
  },
  { domain: 'acmebank-secure.net', registrar: 'Demo Domains LLC', ip: '198.51.100.13', country: 'Russia' },
  { domain: 'acme-bank.com.verify-account.info', ip: '203.0.113.9', country: 'Panama' },
  {
    domain: 'acme-bank.shop',
    registrar: 'Example Registrar, Inc.',
    ip: '203.0.113.30',
    ipv6: '2001:db8::30',
    country: 'Germany',
  },
  { domain: 'acme-bamk.com' },
  { domain: 'acmee-bank.com' },
  { domain: 'acme-banks.com' },
  { domain: 'acme-bànk.com', registrar: 'Demo Domains LLC', ip: '198.51.100.99', country: 'Seychelles' },
];

const SYLLABLES = [
  'lo',
  'ra',
  'ven',
  'tor',
  'mi',
  'ka',
  'sun',
  'bel',
  'dor',
  'fin',
  'gra',
  'hol',
  'jet',
  'lux',
  'mar',
  'nor',
  'pix',
  'qui',
  'rex',
  'sol',
];
const WORDS = [
  'shop',
  'store',
  'deals',
  'studio',
  'garden',
  'travel',
  'crypto',
  'health',
  'media',
  'labs',
  'home',
  'auto',
  'cloud',
  'games',
];
const SUFFIXES = ['com', 'com', 'com', 'net', 'org', 'xyz', 'online', 'shop', 'info', 'top'];

const DEMO_DAYS = 14;

function demoDomains(count: number): ObservedDomain[] {
  const random = seededRandom(8);
  const pick = <T>(values: readonly T[]) => values[Math.floor(random() * values.length)]!;
  const invented = Array.from({ length: count }, () => {
    const name = `${pick(SYLLABLES)}${pick(SYLLABLES)}${random() < 0.5 ? `-${pick(WORDS)}` : pick(WORDS)}`;
    return { domain: `${name}.${pick(SUFFIXES)}`, origin: 'nrd' as const };
  });
  // The lookalikes land on days spread over the two weeks, among the invented names.
  const lookalikes = LOOKALIKES.map((domain) => ({
    ...domain,
    origin: domain.ip ? ('dnstwist' as const) : ('nrd' as const),
  }));
  const all: ObservedDomain[] = [...invented];
  lookalikes.forEach((domain, i) => all.splice(Math.floor(((i + 0.5) * all.length) / lookalikes.length), 0, domain));
  return all;
}

/** Stores the demo feed as learned of over the 14 days before `now`; returns how many were new. */
export async function loadDemoDomains(context: SourceContext, now: number): Promise<number> {
  const domains = demoDomains(280);
  let added = 0;
  for (let day = 0; day < DEMO_DAYS; day++) {
    const ofDay: CheckedDomain[] = [];
    domains.forEach((domain, i) => {
      const name = parseDomainName(domain.domain);
      if (i % DEMO_DAYS === day && typeof name !== 'string')
        ofDay.push({ name, domain: { ...domain, registered_at: now - (day + 2) * DAY_MS } });
    });
    added += (await writeObservedDomains(context, ofDay, now - (day + 1) * DAY_MS)).added;
  }
  return added;
}
