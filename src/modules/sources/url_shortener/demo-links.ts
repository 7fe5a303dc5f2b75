import { DAY_MS, HOUR_MS } from '../../../lib/clock.ts';
import type { SourceContext } from '../kit/source.ts';
import { writeShortLinks } from './short-link-store.ts';

/**
 * Synthetic short links of a crawl, some pointing at the made-up acme-bank.com (the catalog
 * example), one at a lookalike host that is not under it, others elsewhere. No real link.
 */
const DEMO_LINKS = [
  { service: 'v.gd', shortcode: 'AcB7qz', target: 'https://secure.acme-bank.com/login?next=%2Faccounts', daysAgo: 1 },
  { service: 'bit.ly', shortcode: '3xAcmeO', target: 'https://acme-bank.com/offers/spring-savings', daysAgo: 2 },
  {
    service: 'tinyurl.com',
    shortcode: 'acme-verify',
    target: 'http://acme-bank.com.account-verify.example/login',
    daysAgo: 2,
  },
  { service: 'is.gd', shortcode: 'Q9wErt', target: 'https://www.acme-bank.com/login/reset', daysAgo: 3 },
  { service: 'v.gd', shortcode: 'Zx81Lp', target: 'https://www.example.org/news/2024/spring', daysAgo: 4 },
  { service: 'bit.ly', shortcode: '4kTrW2m', target: 'https://docs.example.net/guide?lang=en', daysAgo: 5 },
];

/** Stores the demo links as learned of over the five days before `now`; returns how many were new. */
export async function loadDemoLinks(context: SourceContext, now: number): Promise<number> {
  let added = 0;
  for (const { service, shortcode, target, daysAgo } of DEMO_LINKS) {
    const discoveredAt = now - daysAgo * DAY_MS;
    const link = {
      service,
      prefix: `https://${service}/`,
      shortcode,
      targetUrl: target,
      target: new URL(target),
      crawledAt: discoveredAt - HOUR_MS,
    };
    added += (await writeShortLinks(context, [link], discoveredAt)).added;
  }
  return added;
}
