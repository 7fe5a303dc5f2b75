import { parseTimestamp, plausibleTime } from '../common/ingest/timestamp.ts';

/**
 * One leak-site post as ransomware.live publishes it, in any of its shapes (docs/ingest.md
 * "Ransomware posts"):
 * - ransomwatch / old posts.json: {post_title, group_name, discovered, published, post_url};
 * - posts.json from 2023: the same plus {description, website};
 * - the v2 API (api.ransomware.live/v2): {victim, group, attackdate, discovered, country,
 *   activity, description, domain, claim_url, url (the post's page, kept as the permalink),
 *   screenshot, infostealer, press, …}.
 * Where both names of a field are present, the older one wins. Other keys are ignored.
 */
export interface PostRecord {
  /** The group's ransomware.live name, lower case (`lockbit3`). */
  group: string;
  /** The victim as the post names it: a company name or a domain. */
  victim: string;
  /** The victim's website(s) as written: one, a comma-separated list, or null. */
  website: string | null;
  description: string | null;
  /** ISO 3166-1 alpha-2 (upper case) when the input gives two letters, else as written. */
  country: string | null;
  /** The victim's sector. */
  activity: string | null;
  /** The post on the group's leak site (usually an .onion URL). */
  postUrl: string | null;
  /** The post's page as the v2 API links it (`url`). */
  permalink: string | null;
  /** When the group published the post (epoch ms); `published`, else `attackdate`, else `discovered`. */
  publishedAt: number;
  /** When ransomware.live first listed it (`discovered`, epoch ms). */
  listedAt: number | null;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Thrown while reading a record: the reason it is rejected. */
class NotAPost extends Error {}

/** The first of `names` present with a non-blank string, trimmed, or null. */
function text(record: Json, names: string[]): string | null {
  for (const name of names) {
    const value = record[name];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') throw new NotAPost(`${name} must be a string`);
    if (value.trim() !== '') return value.trim();
  }
  return null;
}

/** What a record's reader reports of a value it stored as null rather than guess (a date in the future). */
type Warn = (reason: string) => void;

/**
 * The first of `names` that holds a plausible date. A date in the future or before 1990 is no
 * date to keep (`warn` hears it), so the next name may stand in for it.
 */
function timestamp(record: Json, names: string[], warn: Warn): number | null {
  for (const name of names) {
    const raw = record[name];
    // pandas' to_json writes dates as epoch milliseconds; an epoch in seconds is 1000 times smaller.
    const epoch = typeof raw === 'number' && Number.isFinite(raw) ? (Math.abs(raw) < 1e11 ? raw * 1000 : raw) : null;
    const value = epoch === null ? text(record, [name]) : String(epoch);
    if (value === null) continue;
    const ms = epoch ?? parseTimestamp(value);
    if (ms === null)
      throw new NotAPost(`${name} is not a date (YYYY-MM-DD HH:MM:SS[.ffffff], UTC unless a zone is given)`);
    const plausible = plausibleTime(ms, warn, `${name} date`);
    if (plausible !== null) return plausible;
  }
  return null;
}

const normalCountry = (country: string | null) =>
  country && /^[a-z]{2}$/i.test(country) ? country.toUpperCase() : country;

function postOf(record: Json, warn: Warn): PostRecord {
  const victim = text(record, ['post_title', 'victim']);
  if (victim === null) throw new NotAPost('post_title (or victim) is missing');
  const group = text(record, ['group_name', 'group']);
  if (group === null) throw new NotAPost('group_name (or group) is missing');
  const listedAt = timestamp(record, ['discovered'], warn);
  const publishedAt = timestamp(record, ['published', 'attackdate'], warn) ?? listedAt;
  if (publishedAt === null)
    throw new NotAPost('published (or attackdate, or discovered) is missing or not a plausible date');
  return {
    group: group.toLowerCase(),
    victim,
    website: text(record, ['website', 'domain']),
    description: text(record, ['description']),
    country: normalCountry(text(record, ['country'])),
    activity: text(record, ['activity']),
    postUrl: text(record, ['post_url', 'claim_url']),
    permalink: text(record, ['url']),
    publishedAt,
    listedAt,
  };
}

/** A post from one JSON record, or why the record is not one; `warn` hears the values not kept. */
export function readPost(record: unknown, warn: Warn = () => {}): PostRecord | string {
  if (!isObject(record)) return 'not a JSON object';
  try {
    return postOf(record, warn);
  } catch (error) {
    if (error instanceof NotAPost) return error.message;
    throw error;
  }
}
