import { describe, expect, it } from 'vitest';
import { dateOf, parseItunesResult, parsePlayApp, storeOf } from './app-listing.ts';

/**
 * Records in the shapes the real APIs give (no fixture of these formats is shipped in
 * /work/shared/fixtures, so they are written here from the documentation: Apple's iTunes
 * Search API results, google-play-scraper's README `app()` example). Apps and developers are
 * made up.
 */
const itunesResult = {
  wrapperType: 'software',
  kind: 'software',
  trackId: 1488200003,
  trackName: 'Acme Bnak: Mobile Banking',
  bundleId: 'com.fastmobile.acmebnak',
  artistId: 1488200100,
  artistName: 'Fast Mobile Ltd',
  sellerName: 'Fast Mobile Limited',
  trackViewUrl: 'https://apps.apple.com/us/app/acme-bnak-mobile-banking/id1488200003?uo=4',
  version: '2.4.1',
  averageUserRating: 2.5,
  userRatingCount: 17,
  releaseDate: '2025-11-02T08:00:00Z',
  currentVersionReleaseDate: '2026-02-20T17:31:09Z',
  description: 'Log in to your account in seconds.',
  primaryGenreName: 'Finance',
  price: 0,
  currency: 'USD',
  minimumOsVersion: '15.0',
  fileSizeBytes: '48734208',
};

const playApp = {
  title: 'AcmeBank Wallet',
  description: 'All your cards in one place.\r\nSecure.',
  descriptionHTML: 'All your cards in one place.<br>Secure.',
  summary: 'Your Acme Bank cards, anywhere',
  installs: '10,000+',
  minInstalls: 10000,
  maxInstalls: 23114,
  score: 4.18,
  scoreText: '4.2',
  ratings: 311,
  reviews: 96,
  price: 0,
  free: true,
  developer: 'Wallet Tools',
  developerId: 'Wallet+Tools',
  developerEmail: 'support@wallet-tools.example',
  genre: 'Finance',
  genreId: 'FINANCE',
  released: 'Jun 8, 2024',
  updated: 1767225600000,
  version: '3.0.2',
  appId: 'com.wallettools.acmebank',
  url: 'https://play.google.com/store/apps/details?id=com.wallettools.acmebank&hl=en&gl=us',
};

describe('parseItunesResult', () => {
  it('reads an iOS app result', () => {
    expect(parseItunesResult(itunesResult)).toEqual({
      platform: 'ios',
      store: 'app_store',
      appId: 'com.fastmobile.acmebnak',
      storeId: '1488200003',
      name: 'Acme Bnak: Mobile Banking',
      developer: 'Fast Mobile Ltd',
      developerId: '1488200100',
      seller: 'Fast Mobile Limited',
      url: 'https://apps.apple.com/us/app/acme-bnak-mobile-banking/id1488200003?uo=4',
      version: '2.4.1',
      installs: null,
      rating: 2.5,
      ratingCount: 17,
      genre: 'Finance',
      releasedAt: Date.parse('2025-11-02T08:00:00Z'),
      updatedAt: Date.parse('2026-02-20T17:31:09Z'),
      description: 'Log in to your account in seconds.',
    });
  });

  it('skips the artist record of a Lookup and rejects what is no iOS app', () => {
    expect(
      parseItunesResult({
        wrapperType: 'artist',
        artistType: 'Software Artist',
        artistName: 'Fast Mobile Ltd',
        artistId: 1488200100,
      }),
    ).toBeNull();
    expect(parseItunesResult({ ...itunesResult, kind: 'mac-software' })).toBe(
      'not an iOS app (kind "mac-software"); search with entity=software',
    );
    expect(parseItunesResult({ wrapperType: 'track', kind: 'song', trackName: 'A song' })).toMatch(
      /^not an iOS app \(kind "song"\)/,
    );
    expect(parseItunesResult({ ...itunesResult, bundleId: undefined })).toBe('bundleId is missing or not an app id');
    expect(parseItunesResult({ ...itunesResult, trackName: '  ' })).toBe('trackName is missing');
    expect(parseItunesResult('x')).toBe('expected a result object');
  });

  it('keeps no seller that is the developer, and builds the URL from the track id when there is none', () => {
    const parsed = parseItunesResult({ ...itunesResult, sellerName: 'Fast Mobile Ltd', trackViewUrl: undefined });
    expect(parsed).toMatchObject({ seller: null, url: 'https://apps.apple.com/app/id1488200003', store: 'app_store' });
  });
});

describe('parsePlayApp', () => {
  it("reads an app as google-play-scraper's app() gives it", () => {
    expect(parsePlayApp(playApp)).toEqual({
      platform: 'android',
      store: 'google_play',
      appId: 'com.wallettools.acmebank',
      storeId: null,
      name: 'AcmeBank Wallet',
      developer: 'Wallet Tools',
      developerId: 'Wallet+Tools',
      seller: null,
      url: 'https://play.google.com/store/apps/details?id=com.wallettools.acmebank&hl=en&gl=us',
      version: '3.0.2',
      installs: 10000,
      rating: 4.18,
      ratingCount: 311,
      genre: 'Finance',
      releasedAt: Date.UTC(2024, 5, 8),
      updatedAt: 1767225600000,
      description: 'Your Acme Bank cards, anywhere\nAll your cards in one place.\r\nSecure.',
    });
  });

  it('reads the install band when minInstalls is absent, and a third-party store from the URL', () => {
    const { minInstalls: _min, ...rest } = playApp;
    expect(
      parsePlayApp({
        ...rest,
        installs: '1,000,000+',
        url: 'https://apkpure.com/acmebank-wallet/com.wallettools.acmebank',
      }),
    ).toMatchObject({ installs: 1_000_000, store: 'apkpure.com' });
    expect(parsePlayApp({ appId: 'com.a.b', title: 'B' })).toMatchObject({
      url: 'https://play.google.com/store/apps/details?id=com.a.b',
      version: '',
      installs: null,
      rating: null,
    });
  });

  it('rejects a record without an app id or title', () => {
    expect(parsePlayApp({ ...playApp, appId: 'has space' })).toBe('appId is missing or not a package name');
    expect(parsePlayApp({ ...playApp, title: null })).toBe('title is missing');
    expect(parsePlayApp([playApp])).toBe('expected an app object');
  });
});

describe('dateOf and storeOf', () => {
  it('reads ISO dates, "Mon D, YYYY" as UTC, and epoch milliseconds or seconds', () => {
    expect(dateOf('2026-02-20T17:31:09Z')).toBe(Date.parse('2026-02-20T17:31:09Z'));
    expect(dateOf('Jun 8, 2011')).toBe(Date.UTC(2011, 5, 8));
    expect(dateOf('Sept. 3, 2020')).toBe(Date.UTC(2020, 8, 3));
    expect(dateOf(1576868577000)).toBe(1576868577000);
    expect(dateOf(1576868577)).toBe(1576868577000);
    expect(dateOf('Varies with device')).toBeNull();
    expect(dateOf('Foo 3, 2020')).toBeNull();
    expect(dateOf(undefined)).toBeNull();
  });

  it('names the store by its host', () => {
    expect(storeOf('https://itunes.apple.com/us/app/id1', 'x')).toBe('app_store');
    expect(storeOf('https://www.apkmirror.com/apk/x', 'x')).toBe('apkmirror.com');
    expect(storeOf('not a url', 'google_play')).toBe('google_play');
    expect(storeOf(null, 'google_play')).toBe('google_play');
  });
});
