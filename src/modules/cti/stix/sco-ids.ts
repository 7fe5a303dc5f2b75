import { uuidV5Generator } from './uuid5.ts';

/** STIX 2.1 section 2.9: the namespace of deterministic Cyber-observable ids. */
const scoUuid = uuidV5Generator('00abedb4-aa42-466c-9c01-fed23315a9b7');

/** STIX 2.1: each SCO type's ID Contributing Properties, in the specification's order. */
const CONTRIBUTING: Record<string, string[]> = {
  'domain-name': ['value'],
  url: ['value'],
  'email-addr': ['value'],
  'ipv4-addr': ['value'],
  'ipv6-addr': ['value'],
  'user-account': ['account_type', 'user_id', 'account_login'],
  'x509-certificate': ['hashes', 'serial_number'],
  file: ['hashes', 'name', 'extensions', 'parent_directory_ref'],
  software: ['name', 'cpe', 'swid', 'vendor', 'version'],
};

/** The one hash an id uses, the first present in this order (STIX 2.1 section 2.9). */
const HASH_PREFERENCE = ['MD5', 'SHA-1', 'SHA-256', 'SHA-512'];

/** RFC 8785 (JCS) for the JSON values SCO properties hold: keys sorted, no whitespace. */
function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const entries = Object.keys(value)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`);
  return `{${entries.join(',')}}`;
}

function oneHash(hashes: Record<string, unknown>): Record<string, unknown> | undefined {
  const algorithm = HASH_PREFERENCE.find((name) => typeof hashes[name] === 'string');
  return algorithm ? { [algorithm]: hashes[algorithm] } : undefined;
}

/**
 * An SCO's deterministic id (STIX 2.1 section 2.9): UUIDv5 in the STIX namespace over the
 * canonical JSON of its ID Contributing Properties, so that every producer names the same
 * domain, URL or account alike. A type without them (none Dragnet makes) hashes all its properties.
 */
export function scoId(type: string, properties: Record<string, unknown>): string {
  // The common case (a domain, a URL, an address) without the generic walk.
  if (typeof properties.value === 'string' && CONTRIBUTING[type]?.[0] === 'value')
    return cachedId(type, `{"value":${JSON.stringify(properties.value)}}`);
  const names = CONTRIBUTING[type] ?? Object.keys(properties);
  const contributing: Record<string, unknown> = {};
  for (const name of names) {
    const value = properties[name];
    if (value === undefined) continue;
    if (name === 'hashes') {
      const hash = oneHash(value as Record<string, unknown>);
      if (hash) contributing.hashes = hash;
    } else contributing[name] = value;
  }
  return cachedId(type, canonical(contributing));
}

// Hits repeat observables (one domain in many leaked logins, one author of many posts): their
// ids are kept, up to a bound, so a collection walk hashes each once.
const MAX_CACHED = 50_000;
const cache = new Map<string, string>();

function cachedId(type: string, canonicalName: string): string {
  const key = `${type}\u0000${canonicalName}`;
  let id = cache.get(key);
  if (id === undefined) {
    if (cache.size >= MAX_CACHED) cache.clear();
    id = `${type}--${scoUuid(canonicalName)}`;
    cache.set(key, id);
  }
  return id;
}
