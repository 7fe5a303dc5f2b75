import { DAY_MS } from '../../../lib/clock.ts';
import type { SourceContext } from '../kit/source.ts';
import type { AppListing } from './app-listing.ts';
import { writeListings } from './app-store.ts';

/**
 * Synthetic demo listings around the fictional "Acme Bank": its own apps (developer "Acme Bank
 * plc"), a lookalike, a reuse of the name in a package id, a description mention, and apps that
 * have nothing to do with it. Every name, id and developer is made up.
 */
const play = (appId: string, name: string, developer: string, extra: Partial<AppListing> = {}): AppListing => ({
  platform: 'android',
  store: 'google_play',
  appId,
  storeId: null,
  name,
  developer,
  developerId: developer.replace(/ /g, '+'),
  seller: null,
  url: `https://play.google.com/store/apps/details?id=${appId}`,
  version: '1.0.0',
  installs: 1000,
  rating: 4.1,
  ratingCount: 120,
  genre: 'Finance',
  releasedAt: null,
  updatedAt: null,
  description: '',
  ...extra,
});

const ios = (
  appId: string,
  storeId: string,
  name: string,
  developer: string,
  extra: Partial<AppListing> = {},
): AppListing => ({
  ...play(appId, name, developer, extra),
  platform: 'ios',
  store: 'app_store',
  storeId,
  developerId: storeId.slice(0, 6),
  url: `https://apps.apple.com/us/app/id${storeId}`,
  installs: null,
  ...extra,
});

function demoListings(now: number): AppListing[] {
  const daysAgo = (days: number) => now - days * DAY_MS;
  return [
    play('com.acmebank.mobile', 'Acme Bank', 'Acme Bank plc', {
      installs: 1_000_000,
      rating: 4.6,
      ratingCount: 52_310,
      version: '8.12.0',
      releasedAt: daysAgo(2100),
      updatedAt: daysAgo(9),
    }),
    ios('com.acmebank.mobile', '1488200001', 'Acme Bank', 'Acme Bank plc', {
      rating: 4.7,
      ratingCount: 88_004,
      version: '8.12.1',
      updatedAt: daysAgo(8),
    }),
    play('com.quickapps.acmebnak', 'Acme Bnak Mobile', 'Quick Apps Studio', {
      installs: 500,
      rating: 2.3,
      ratingCount: 14,
      releasedAt: daysAgo(12),
      updatedAt: daysAgo(12),
      description: 'Secure login to your bank account.',
    }),
    play('com.walletpro.acmebank', 'Wallet Pro: Cards & Rewards', 'Fin Tools Ltd', {
      installs: 10_000,
      rating: 3.9,
      ratingCount: 310,
      releasedAt: daysAgo(60),
      updatedAt: daysAgo(5),
    }),
    play('net.budgetly.app', 'Budgetly', 'Budgetly Inc', {
      installs: 100_000,
      genre: 'Finance',
      releasedAt: daysAgo(400),
      updatedAt: daysAgo(20),
      description:
        'Link your cards from Acme Bank, Northwind Credit and 300 other banks and see every expense in one place.',
    }),
    ios('com.rewardshub.acmebank', '1488200002', 'Acme Bank Rewards', 'Rewards Hub LLC', {
      rating: 3.1,
      ratingCount: 42,
      releasedAt: daysAgo(30),
      updatedAt: daysAgo(3),
    }),
    play('com.weatherly.now', 'Weather Now', 'Weatherly', { installs: 5_000_000, genre: 'Weather' }),
    play('com.frogjump.game', 'Frog Jump', 'Pond Games', { installs: 50_000, genre: 'Arcade' }),
  ];
}

/** Stores the demo listings as found one to eight days before `now`; returns how many were new. */
export async function loadDemoApps(context: SourceContext, now: number): Promise<number> {
  let added = 0;
  for (const [i, listing] of demoListings(now).entries()) {
    added += (await writeListings(context, [listing], { name: 'demo-apps', discoveredAt: now - (1 + i) * DAY_MS }))
      .added;
  }
  return added;
}
