/**
 * One app listing as the store keeps it, from either input format (docs/ingest.md "App
 * listings"): an iTunes Search/Lookup API result, or an app as google-play-scraper's `app()`
 * returns it. The parsers return the listing, null for a record that is no app listing to
 * keep (the artist record heading a Lookup by artist id), or the reason the record is rejected.
 */
export type Platform = 'android' | 'ios';

export interface AppListing {
  platform: Platform;
  /** `google_play`, `app_store`, or the host of a third-party store's URL. */
  store: string;
  /** Package name (Android) or bundle id (iOS). */
  appId: string;
  /** The store's own numeric id (iTunes trackId). */
  storeId: string | null;
  name: string;
  developer: string | null;
  developerId: string | null;
  /** iOS: the legal seller, when the store names one besides the developer. */
  seller: string | null;
  url: string | null;
  /** '' when the listing names none. */
  version: string;
  /** The lower bound of the install count band (Google Play only). */
  installs: number | null;
  rating: number | null;
  ratingCount: number | null;
  genre: string | null;
  releasedAt: number | null;
  updatedAt: number | null;
  /** Description and summary, as one text. */
  description: string;
}

export type ParsedListing = AppListing | null | string;

const MAX_TEXT = 300;
// Both stores cap descriptions at 4,000 characters; more is not a real listing's.
const MAX_DESCRIPTION = 20_000;
const MAX_ID = 255;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function text(value: unknown, max = MAX_TEXT): string | null {
  if (typeof value !== 'string') return null;
  const clean = value.replace(/\s+/g, ' ').trim();
  return clean === '' ? null : clean.slice(0, max);
}

/** An id the stores give as a number or a string (trackId, artistId, developerId). */
function idText(value: unknown): string | null {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return text(value, MAX_ID);
}

const count = (value: unknown): number | null =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;

function ratingOf(value: unknown): number | null {
  const number = typeof value === 'string' ? Number(value) : value;
  return typeof number === 'number' && Number.isFinite(number) && number >= 0 && number <= 5 ? number : null;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/**
 * A date as the stores write it: ISO 8601 (iTunes), "Jun 8, 2011" (Google Play's `released`,
 * read as UTC midnight), or epoch milliseconds (`updated`; older Python scrapers give seconds).
 */
export function dateOf(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value) && value > 0) return value < 1e11 ? value * 1000 : value;
  if (typeof value !== 'string') return null;
  const written = /^([A-Za-z]{3})[a-z]*\.? (\d{1,2}), (\d{4})$/.exec(value.trim());
  if (written) {
    const month = MONTHS.indexOf(written[1]!.toLowerCase());
    return month === -1 ? null : Date.UTC(Number(written[3]), month, Number(written[2]));
  }
  const parsed = /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : NaN;
  return Number.isNaN(parsed) ? null : parsed;
}

/** The store a listing URL belongs to. */
export function storeOf(url: string | null, fallback: string): string {
  if (!url) return fallback;
  try {
    const host = new URL(url).hostname.toLowerCase();
    if (host === 'play.google.com') return 'google_play';
    if (host === 'apps.apple.com' || host === 'itunes.apple.com') return 'app_store';
    return host.replace(/^www\./, '');
  } catch {
    return fallback;
  }
}

function httpUrl(value: unknown): string | null {
  const url = text(value, 2048);
  return url && /^https?:\/\//i.test(url) ? url : null;
}

const APP_ID = /^[^\s/]{1,255}$/;

/**
 * One entry of an iTunes Search or Lookup response's `results` (kind "software": iPhone and
 * iPad apps). A Lookup by artist id lists the artist first (wrapperType "artist"): skipped.
 */
export function parseItunesResult(record: unknown): ParsedListing {
  if (!isObject(record)) return 'expected a result object';
  if (record.wrapperType === 'artist') return null;
  if (record.kind !== 'software')
    return `not an iOS app (kind ${JSON.stringify(record.kind ?? null)}); search with entity=software`;
  const appId = text(record.bundleId, MAX_ID);
  if (!appId || !APP_ID.test(appId)) return 'bundleId is missing or not an app id';
  const name = text(record.trackName);
  if (!name) return 'trackName is missing';
  const storeId = idText(record.trackId);
  const url = httpUrl(record.trackViewUrl) ?? (storeId ? `https://apps.apple.com/app/id${storeId}` : null);
  const developer = text(record.artistName) ?? text(record.sellerName);
  const seller = text(record.sellerName);
  return {
    platform: 'ios',
    store: storeOf(url, 'app_store'),
    appId,
    storeId,
    name,
    developer,
    developerId: idText(record.artistId),
    seller: seller === developer ? null : seller,
    url,
    version: text(record.version, 100) ?? '',
    installs: null,
    rating: ratingOf(record.averageUserRating),
    ratingCount: count(record.userRatingCount),
    genre: text(record.primaryGenreName),
    releasedAt: dateOf(record.releaseDate),
    updatedAt: dateOf(record.currentVersionReleaseDate),
    description: typeof record.description === 'string' ? record.description.slice(0, MAX_DESCRIPTION) : '',
  };
}

/** "10,000+" -> 10000: the band google-play-scraper gives as `installs` beside `minInstalls`. */
function installsOf(record: Record<string, unknown>): number | null {
  const min = count(record.minInstalls);
  if (min !== null) return min;
  const band = typeof record.installs === 'string' ? record.installs.replace(/[,.\s+]/g, '') : '';
  return /^\d{1,15}$/.test(band) ? Number(band) : count(record.installs);
}

/** One app as google-play-scraper's `app()` returns it (a line of the JSONL format). */
export function parsePlayApp(record: unknown): ParsedListing {
  if (!isObject(record)) return 'expected an app object';
  const appId = text(record.appId, MAX_ID);
  if (!appId || !APP_ID.test(appId)) return 'appId is missing or not a package name';
  const name = text(record.title);
  if (!name) return 'title is missing';
  const url = httpUrl(record.url) ?? `https://play.google.com/store/apps/details?id=${encodeURIComponent(appId)}`;
  const description = [record.summary, record.description]
    .filter((part): part is string => typeof part === 'string')
    .join('\n');
  return {
    platform: 'android',
    store: storeOf(url, 'google_play'),
    appId,
    storeId: null,
    name,
    developer: text(record.developer),
    developerId: idText(record.developerId),
    seller: null,
    url,
    version: text(record.version, 100) ?? '',
    installs: installsOf(record),
    rating: ratingOf(record.score),
    ratingCount: count(record.ratings),
    genre: text(record.genre),
    releasedAt: dateOf(record.released),
    updatedAt: dateOf(record.updated),
    description: description.slice(0, MAX_DESCRIPTION),
  };
}

const STORE_ID = /^\d{1,15}$/;

/**
 * One app as app-store-scraper's `app()` / `search()` returns it: `id` the numeric App Store id,
 * `appId` the bundle id, `released`/`updated` ISO dates, `score` the rating.
 */
export function parseAppStoreScraperApp(record: Record<string, unknown>): ParsedListing {
  const appId = text(record.appId, MAX_ID);
  if (!appId || !APP_ID.test(appId)) return 'appId is missing or not a bundle id';
  const name = text(record.title);
  if (!name) return 'title is missing';
  const storeId = idText(record.id);
  const url = httpUrl(record.url) ?? (storeId ? `https://apps.apple.com/app/id${storeId}` : null);
  const description = [record.description, record.releaseNotes]
    .filter((part): part is string => typeof part === 'string')
    .join('\n');
  return {
    platform: 'ios',
    store: storeOf(url, 'app_store'),
    appId,
    storeId,
    name,
    developer: text(record.developer),
    developerId: idText(record.developerId),
    seller: null,
    url,
    version: text(record.version, 100) ?? '',
    installs: null,
    rating: ratingOf(record.score),
    ratingCount: count(record.reviews) ?? count(record.ratings),
    genre: text(record.primaryGenre) ?? text(record.genre),
    releasedAt: dateOf(record.released),
    updatedAt: dateOf(record.updated),
    description: description.slice(0, MAX_DESCRIPTION),
  };
}

/**
 * Which scraper wrote `record`, by its shape: app-store-scraper always gives `id`, the numeric App
 * Store id; google-play-scraper never gives one (its `appId`, a package name, is the id). A store
 * URL must agree. A record that does not tell is refused with the reason, not guessed.
 */
export function parseScrapedApp(record: unknown): ParsedListing {
  if (!isObject(record)) return 'expected an app object';
  const urlStore = storeOf(httpUrl(record.url), '');
  const numericId =
    (typeof record.id === 'number' && Number.isSafeInteger(record.id)) ||
    (typeof record.id === 'string' && STORE_ID.test(record.id));
  if (numericId && urlStore !== 'google_play') return parseAppStoreScraperApp(record);
  if (record.id === undefined && urlStore !== 'app_store') return parsePlayApp(record);
  return 'cannot tell the store: an App Store app (app-store-scraper) has a numeric id, a Google Play app (google-play-scraper) none, and the url must agree';
}
