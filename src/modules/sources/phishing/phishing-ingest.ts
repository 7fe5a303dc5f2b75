import path from 'node:path';
import type { Readable } from 'node:stream';
import {
  expandInputs,
  IngestError,
  newInputResult,
  openInput,
  parseJson,
  readLines,
  reportInputs,
  storeInBatches,
  type IngestProgress,
  type InputResult,
  type ReadRecord,
} from '../common/ingest/ingest-kit.ts';
import type { Ingester } from '../kit/source.ts';
import { parseDomainName } from '../common/domains/domain-name.ts';
import { writeObservedDomains, type CheckedDomain, type ObservedDomain } from '../common/domains/observed-domains.ts';

/** `dragnet ingest phishing` (docs/ingest.md "phishing"): NRD lists and dnstwist scans into observed_domains. */

// Domains per transaction: a crash loses at most one uncommitted batch.
const BATCH = 5000;

/**
 * A dnstwist result is one JSON document, read whole: one domain's permutations with DNS data
 * are a few MB at most (a --dictionary and --tld scan of a long name included).
 */
const DNSTWIST_MAX_BYTES = 64 * 1024 * 1024;

interface Counts {
  /** dnstwist entries that are no registered domain (no DNS or WHOIS data), skipped. */
  unregistered: number;
}

/** A domain of an input as a record to store, or why it is no domain name. */
function checked(raw: string, location: string, details: Omit<ObservedDomain, 'domain'>): ReadRecord<CheckedDomain> {
  const name = parseDomainName(raw);
  return { location, record: typeof name === 'string' ? `${JSON.stringify(raw.slice(0, 100))}: ${name}` : { name, domain: { ...details, domain: raw } } };
}

// "# Time of Compilation: 2025-01-03 06:29:14 UTC", "# Last modified: …", "! Updated: …".
const LIST_DATE = /^[#!]\s*(?:time of compilation|last modified|last updated|updated|generated|date)\s*:\s*(.+)$/i;

/** A header date as epoch ms (`2025-01-03 06:29:14 UTC` included), or null. */
function headerDate(text: string): number | null {
  const iso = text.trim().replace(/^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2})?)\s*(?:UTC|GMT|Z)$/i, '$1T$2Z');
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? null : ms;
}

/**
 * An NRD list: `#` header lines, then one domain a line. The adblock variant (`||domain^`, `!`
 * comments, an `[Adblock Plus]` header) and the wildcard one (`*.domain`) are read alike. A
 * header date (compile time) is the domains' first_seen.
 */
async function* nrdDomains(stream: Readable, progress?: IngestProgress): AsyncGenerator<ReadRecord<CheckedDomain>> {
  let listDate: number | null = null;
  for await (const { line, number } of readLines(stream, (bytes) => progress?.advance(bytes))) {
    const text = line.trim();
    if (text === '' || text.startsWith('[')) continue;
    if (text.startsWith('#') || text.startsWith('!')) {
      const date = LIST_DATE.exec(text);
      if (date) listDate = headerDate(date[1]!) ?? listDate;
      continue;
    }
    const adblock = /^\|\|([^^$/]+)\^?/.exec(text);
    yield checked(adblock ? adblock[1]! : text, `line ${number}`, { origin: 'nrd', first_seen: listDate });
  }
}

interface DnstwistEntry {
  fuzzer?: unknown;
  domain?: unknown;
  dns_a?: unknown;
  dns_aaaa?: unknown;
  dns_ns?: unknown;
  dns_mx?: unknown;
  geoip?: unknown;
  whois_registrar?: unknown;
  whois_created?: unknown;
}

/** A DNS answer list without dnstwist's `!ServFail` markers; null when nothing is left. */
function answers(value: unknown): string[] | null {
  if (!Array.isArray(value)) return null;
  const list = value.filter((item): item is string => typeof item === 'string' && item !== '' && !item.startsWith('!'));
  return list.length ? list : null;
}

const REGISTERED_KEYS = ['dns_a', 'dns_aaaa', 'dns_ns', 'dns_mx', 'whois_registrar', 'whois_created'];

const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : null);

async function readWhole(stream: Readable, progress?: IngestProgress): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    progress?.advance(chunk.length);
    if (size > DNSTWIST_MAX_BYTES) throw new IngestError('dnstwist', 'file', `larger than ${DNSTWIST_MAX_BYTES / 1024 / 1024} MiB: split it, or give dnstwist --format list output as an NRD list`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8').replace(/^\uFEFF/, '');
}

/**
 * dnstwist `--format json`: an array of `{fuzzer, domain, dns_a?, dns_aaaa?, dns_ns?, dns_mx?,
 * geoip?, whois_registrar?, whois_created?}`. The `*original` entry (the scanned domain) and
 * permutations without any record (not registered: dnstwist without --registered lists them
 * all) are skipped: they are no observed domain.
 */
async function* dnstwistDomains(stream: Readable, input: string, counts: Counts, progress?: IngestProgress): AsyncGenerator<ReadRecord<CheckedDomain>> {
  let entries: unknown;
  try {
    entries = parseJson(await readWhole(stream, progress));
  } catch (error) {
    if (error instanceof IngestError) throw new IngestError(input, error.location, error.reason);
    throw new IngestError(input, 'file', `not JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(entries)) throw new IngestError(input, 'file', 'not a dnstwist JSON result (an array of permutations)');
  for (const [i, entry] of (entries as unknown[]).entries()) {
    const location = `record ${i + 1}`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      yield { location, record: 'not an object' };
      continue;
    }
    const permutation = entry as DnstwistEntry;
    if (typeof permutation.domain !== 'string') {
      yield { location, record: 'no domain' };
      continue;
    }
    if (permutation.fuzzer === '*original') continue;
    const a = answers(permutation.dns_a);
    const aaaa = answers(permutation.dns_aaaa);
    const ns = answers(permutation.dns_ns);
    const mx = answers(permutation.dns_mx);
    const registrar = text(permutation.whois_registrar);
    const created = text(permutation.whois_created);
    // dnstwist's own test: a permutation with any record (a `!ServFail` answer included: the
    // name is delegated) is registered.
    if (!REGISTERED_KEYS.some((key) => key in permutation)) {
      counts.unregistered++;
      continue;
    }
    const registeredAt = created === null ? null : Date.parse(created);
    yield checked(permutation.domain, location, {
      origin: 'dnstwist',
      ip: a?.[0] ?? null,
      ipv6: aaaa?.[0] ?? null,
      name_servers: ns,
      mx,
      country: text(permutation.geoip),
      registrar,
      registered_at: registeredAt === null || Number.isNaN(registeredAt) ? null : registeredAt,
    });
  }
}

const LIST_FILES = new Set(['.txt', '.list', '.lst', '.domains']);

export const phishingIngester: Ingester = {
  name: 'phishing',
  description: 'newly observed domains for lookalike matching: NRD lists (one domain a line, adblock ||domain^ too) or dnstwist --format json results',
  formats: ['nrd', 'dnstwist'],
  async run(context, inputs, options) {
    const dnstwist = options.format === 'dnstwist';
    const results: InputResult[] = [];
    const counts: Counts = { unregistered: 0 };
    const accept = (file: string) => (dnstwist ? path.extname(file).toLowerCase() === '.json' : LIST_FILES.has(path.extname(file).toLowerCase()));
    for (const input of expandInputs(inputs, accept)) {
      const result = newInputResult(input);
      results.push(result);
      const { stream, size } = openInput(input);
      if (size !== null) options.progress?.start(input, size, 'bytes');
      await storeInBatches({
        result,
        records: dnstwist ? dnstwistDomains(stream, input, counts, options.progress) : nrdDomains(stream, options.progress),
        batchSize: BATCH,
        write: (batch) => writeObservedDomains(context, batch),
        stream,
        noun: 'domains',
        progress: options.progress,
      });
    }
    const report = reportInputs('domains', results, dnstwist ? { unregistered_skipped: counts.unregistered } : {});
    if (counts.unregistered > 0) report.lines.push(`  ${counts.unregistered} unregistered permutations skipped (no DNS or WHOIS data)`);
    return report;
  },
};
