import { seededRandom } from '../seeded-random.ts';
import type { CredentialRecord } from './credential.ts';

/**
 * Synthetic credentials (never real people's): the demo data of `dragnet demo` and the corpus
 * of `npm run bench -- leaks`. Same seed, same credentials.
 */
export const DEMO_DOMAINS = [
  'acme-bank.com',
  'globex.com',
  'initech.io',
  'umbrella-corp.org',
  'contoso.com',
  'northwind.co',
];
const WEBMAIL = ['gmail.com', 'outlook.com', 'yahoo.com', 'proton.me', 'mail.ru'];
const SITES = [
  'netflix.com',
  'linkedin.com',
  'github.com',
  'dropbox.com',
  'okta.com',
  'steamcommunity.com',
  'amazon.com',
  'facebook.com',
];
const FIRST = ['alex', 'sam', 'jordan', 'taylor', 'morgan', 'casey', 'jamie', 'riley', 'drew', 'quinn'];
const LAST = ['doe', 'roe', 'smith', 'novak', 'ivanova', 'garcia', 'kim', 'muller', 'rossi', 'silva'];
const PATHS = ['/login', '/signin', '/account', '/wp-admin/', '/admin/login', '/', '/sso/saml', '/owa/auth/logon.aspx'];
const SUBDOMAINS = ['www', 'vpn', 'mail', 'portal', 'shop', 'intranet'];
const SOFTWARE = ['Google_[Chrome]_Default', 'Edge_Default', 'Mozilla_[Firefox]_default-release', 'Opera GX'];
const COUNTRIES = ['US', 'DE', 'BR', 'IN', 'FR', 'PL', 'TR'];

const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

/** `count` credentials: staff and customers of the demo domains, on their sites and elsewhere. */
export function* generateCredentials(options: {
  seed: number;
  count: number;
  domains?: readonly string[];
}): Generator<CredentialRecord> {
  const random = seededRandom(options.seed);
  const domains = options.domains ?? DEMO_DOMAINS;
  for (let i = 0; i < options.count; i++) {
    const domain = pick(random, domains);
    const name = `${pick(random, FIRST)}.${pick(random, LAST)}${Math.floor(random() * 100)}`;
    const staff = random() < 0.4;
    const login = `${name}@${staff ? domain : pick(random, WEBMAIL)}`;
    const onOwnSite = random() < 0.7;
    const url = onOwnSite
      ? `https://${pick(random, SUBDOMAINS)}.${domain}${pick(random, PATHS)}`
      : `https://${pick(random, SITES)}/login`;
    const password = `${pick(random, LAST)}${Math.floor(random() * 100000)}${pick(random, ['!', '#', '', '2024'])}`;
    yield {
      url,
      login,
      password,
      software: pick(random, SOFTWARE),
      machine: { country: pick(random, COUNTRIES), os: 'Windows 10 Pro x64', infectedAt: null },
    };
  }
}

/** A combolist line for a record: `url:login:password` (the format stealer "URL logs" sell). */
export const comboLine = (record: CredentialRecord): string => `${record.url ?? ''}:${record.login}:${record.password}`;
