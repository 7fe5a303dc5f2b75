import type { Readable } from 'node:stream';
import { readCsvRows } from '../common/cards/parsers/csv-rows.ts';
import { IngestError, parseJson, type IngestProgress } from '../common/ingest/ingest-kit.ts';
import { parseTimestamp, plausibleTime } from '../common/ingest/timestamp.ts';
import type { ObservedDomain } from '../common/domains/observed-domains.ts';

/**
 * dnstwist results in every layout its versions wrote, as one shape. Today (`--format json` /
 * `csv`): `fuzzer, domain, dns_a, dns_aaaa, dns_ns, dns_mx, geoip, whois_registrar,
 * whois_created, ssdeep, phash, banner_http, banner_smtp, mx_spy`, lists in JSON and `;`-joined
 * in CSV, the scanned name as `*original`. Before (`--json` / `--csv`): `domain-name, dns-a,
 * dns-aaaa, dns-mx, dns-ns, geoip-country, whois-created, whois-updated, ssdeep-score`, a DNS
 * answer a string or a list, capitalised fuzzers and `Original*`.
 */

/** A permutation whose names are normalised (`domain-name` is `domain`, `dns-a` is `dns_a`). */
export type DnstwistPermutation = Record<string, unknown>;

/** A dnstwist JSON result is one document, read whole: a few MB even for a --dictionary and --tld scan. */
const DNSTWIST_MAX_BYTES = 64 * 1024 * 1024;

// Older names of today's keys (after `-` became `_`).
const RENAMED: Record<string, string> = { domain_name: 'domain', geoip_country: 'geoip' };

/** `dns-a`, `Dns_A` and `dns_a` are one key. */
const keyOf = (key: string) => {
  const normal = key.trim().toLowerCase().replaceAll('-', '_');
  return RENAMED[normal] ?? normal;
};

export const normalisedPermutation = (entry: Record<string, unknown>): DnstwistPermutation =>
  Object.fromEntries(Object.entries(entry).map(([key, value]) => [keyOf(key), value]));

/** The header of a dnstwist CSV (any version): it names the fuzzer and the domain first. */
export const isDnstwistCsvHeader = (line: string) =>
  /^"?fuzzer"?\s*,\s*"?domain(?:[-_]name)?"?\s*(?:,|$)/i.test(line.trim());

async function readWhole(stream: Readable, input: string, progress?: IngestProgress): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    progress?.advance(chunk.length);
    if (size > DNSTWIST_MAX_BYTES)
      throw new IngestError(
        input,
        'file',
        `larger than ${DNSTWIST_MAX_BYTES / 1024 / 1024} MiB: split it, or give dnstwist --format list output as an NRD list`,
      );
    chunks.push(chunk);
  }
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/^\uFEFF/, '');
}

/** The entries of a dnstwist JSON result, each normalised, or why an entry is none. */
export async function* dnstwistJsonEntries(
  stream: Readable,
  input: string,
  progress?: IngestProgress,
): AsyncGenerator<{ location: string; entry: DnstwistPermutation | string }> {
  let entries: unknown;
  try {
    entries = parseJson(await readWhole(stream, input, progress));
  } catch (error) {
    if (error instanceof IngestError) throw new IngestError(input, error.location, error.reason);
    throw new IngestError(input, 'file', `not JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(entries))
    throw new IngestError(input, 'file', 'not a dnstwist JSON result (an array of permutations)');
  for (const [i, entry] of (entries as unknown[]).entries()) {
    const location = `record ${i + 1}`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) yield { location, entry: 'not an object' };
    else yield { location, entry: normalisedPermutation(entry as Record<string, unknown>) };
  }
}

/** The rows of a dnstwist CSV result, each normalised; an empty cell is no value, as dnstwist omits a key. */
export async function* dnstwistCsvEntries(
  stream: Readable,
  progress?: IngestProgress,
): AsyncGenerator<{ location: string; entry: DnstwistPermutation | string }> {
  stream.on('data', (chunk: Buffer) => progress?.advance(chunk.length));
  for await (const row of readCsvRows<string>(stream, { columns: (header) => header.map(keyOf) })) {
    const location = `line ${row.line}`;
    if ('error' in row) yield { location, entry: row.error };
    else
      yield {
        location,
        entry: Object.fromEntries(Object.entries(row.row).filter(([, value]) => value !== undefined && value !== '')),
      };
  }
}

/** A DNS answer as a list: JSON lists, old scalar strings and `;`-joined CSV cells alike. */
const valuesOf = (value: unknown): string[] => {
  const items = Array.isArray(value) ? value : typeof value === 'string' ? value.split(';') : [];
  return items
    .filter((item): item is string => typeof item === 'string')
    .map((item) => item.trim())
    .filter((item) => item !== '');
};

/** The answers without dnstwist's `!ServFail` markers; null when nothing is left. */
function answers(value: unknown): string[] | null {
  const list = valuesOf(value).filter((item) => !item.startsWith('!'));
  return list.length ? list : null;
}

const text = (value: unknown) =>
  typeof value === 'string' && value.trim() !== '' && value.trim() !== 'None' ? value.trim() : null;

const REGISTERED_KEYS = ['dns_a', 'dns_aaaa', 'dns_ns', 'dns_mx', 'whois_registrar', 'whois_created'];

/** The scanned domain itself: `*original` today, `Original*` before. */
export const isOriginal = (fuzzer: unknown) =>
  typeof fuzzer === 'string' && fuzzer.replaceAll('*', '').trim().toLowerCase() === 'original';

/**
 * dnstwist's own test: a permutation with any DNS or WHOIS answer (a `!ServFail` included: the
 * name is delegated) is registered; without --registered dnstwist lists the others too.
 */
export const isRegistered = (permutation: DnstwistPermutation) =>
  REGISTERED_KEYS.some((key) => valuesOf(permutation[key]).length > 0);

/**
 * What a registered permutation tells of its domain. `whois_created` is a date (`2021-04-02`, older
 * versions `2021-04-02 10:00:00`); any other text or an implausible date is stored as null with a
 * warning.
 */
export function permutationDetails(
  permutation: DnstwistPermutation,
  warn: (reason: string) => void,
): Omit<ObservedDomain, 'domain'> {
  const created = text(permutation.whois_created);
  const parsed = created === null ? null : parseTimestamp(created);
  if (created !== null && parsed === null) warn('whois_created is not a date');
  return {
    origin: 'dnstwist',
    ip: answers(permutation.dns_a)?.[0] ?? null,
    ipv6: answers(permutation.dns_aaaa)?.[0] ?? null,
    name_servers: answers(permutation.dns_ns),
    mx: answers(permutation.dns_mx),
    country: text(permutation.geoip),
    registrar: text(permutation.whois_registrar),
    registered_at: plausibleTime(parsed, warn, 'whois_created'),
  };
}
