import { DAY_MS, HOUR_MS } from '../../../lib/clock.ts';
import type { SourceContext } from '../kit/source.ts';
import type { PostRecord } from './post-record.ts';
import { writePosts } from './post-store.ts';

/**
 * Synthetic leak-site posts about made-up organizations (the catalog example "Acme Bank" among
 * them), in the shape ransomware.live gives. No real victim is named.
 */
const DEMO_POSTS: (Omit<PostRecord, 'publishedAt' | 'listedAt' | 'permalink'> & { daysAgo: number })[] = [
  {
    daysAgo: 1,
    group: 'lockbit3',
    victim: 'Acme Bank PLC',
    website: 'acme-bank.com',
    description: 'Acme Bank PLC is a retail and commercial bank. All customer and account data will be published.',
    country: 'US',
    activity: 'Financial Services',
    postUrl: 'http://lockbitdemo2d73krlbewgv27tquljgxr33xbwwsp6rkyieto7u4ncead.onion/post/demo-acme-bank',
  },
  {
    daysAgo: 2,
    group: 'alphv',
    victim: 'Northwind Traders',
    website: 'www.northwind-traders.example, northwind.example',
    description:
      'Wholesale distributor. 120 GB of contracts, invoices and HR files; a partner list naming acme-bank.com.',
    country: 'DE',
    activity: 'Wholesale',
    postUrl: 'http://alphvdemommm27o3abo3r2mlmjrpdmzle3rykajqc5xsj7j7ejksbpsa36ad.onion/demo-northwind',
  },
  {
    daysAgo: 3,
    group: 'play',
    victim: 'Globex Manufacturing',
    website: 'https://www.globex-manufacturing.com',
    description: 'Ontario, Canada',
    country: 'CA',
    activity: 'Manufacturing',
    postUrl: null,
  },
  {
    daysAgo: 4,
    group: 'akira',
    victim: 'initech.io',
    website: null,
    description: 'We hold 80 GB of their corporate data including HR, accounting and financials.',
    country: 'GB',
    activity: 'Technology',
    postUrl: null,
  },
  {
    daysAgo: 5,
    group: 'clop',
    victim: 'Acmeville Public Library',
    website: 'acmeville-library.org',
    description: null,
    country: 'US',
    activity: 'Education',
    postUrl: null,
  },
];

/**
 * Stores the demo posts as published over the five days before `now`'s day and learned of an
 * hour later each; the same day's demo again adds nothing (same keys). Returns how many were new.
 */
export async function loadDemoPosts(context: SourceContext, now: number): Promise<number> {
  const today = now - (now % DAY_MS);
  let added = 0;
  for (const { daysAgo, ...post } of DEMO_POSTS) {
    const publishedAt = today - daysAgo * DAY_MS + 9 * HOUR_MS;
    const record: PostRecord = { ...post, publishedAt, listedAt: publishedAt + HOUR_MS, permalink: null };
    added += (await writePosts(context, [record], publishedAt + HOUR_MS)).added;
  }
  return added;
}
