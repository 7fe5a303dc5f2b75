import path from 'node:path';
import type { Readable } from 'node:stream';
import {
  expandInputs,
  failInput,
  inputLine,
  newInputResult,
  readLines,
  reportInputs,
  storeInBatches,
  type IngestProgress,
  type InputResult,
  type ReadRecord,
} from '../common/ingest/ingest-kit.ts';
import { detectFormat, HEAD_BYTES, peekInput, type DetectableFormat } from '../common/ingest/format-detection.ts';
import { plausibleTime } from '../common/ingest/timestamp.ts';
import type { Ingester } from '../kit/source.ts';
import {
  dnstwistCsvEntries,
  dnstwistJsonEntries,
  isDnstwistCsvHeader,
  isOriginal,
  isRegistered,
  permutationDetails,
  type DnstwistPermutation,
} from './dnstwist-read.ts';
import { parseDomainName } from '../common/domains/domain-name.ts';
import { writeObservedDomains, type CheckedDomain, type ObservedDomain } from '../common/domains/observed-domains.ts';

/** `dragnet ingest phishing` (docs/ingest.md "phishing"): NRD lists and dnstwist scans into observed_domains. */

// Domains per transaction: a crash loses at most one uncommitted batch.
const BATCH = 5000;

interface Counts {
  /** dnstwist entries that are no registered domain (no DNS or WHOIS data), skipped. */
  unregistered: number;
}

/** A domain of an input as a record to store, or why it is no domain name. */
function checked(raw: string, location: string, details: Omit<ObservedDomain, 'domain'>): ReadRecord<CheckedDomain> {
  const name = parseDomainName(raw);
  return {
    location,
    record:
      typeof name === 'string'
        ? `${JSON.stringify(raw.slice(0, 100))}: ${name}`
        : { name, domain: { ...details, domain: raw } },
  };
}

// "# Time of Compilation: 2025-01-03 06:29:14 UTC", "# Last modified: …", "! Updated: …".
const LIST_DATE = /^[#!]\s*(?:time of compilation|last modified|last updated|updated|generated|date)\s*:\s*(.+)$/i;

/** A header date as epoch ms (`2025-01-03 06:29:14 UTC` included), or null. */
function headerDate(text: string): number | null {
  const iso = text.trim().replace(/^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2})?)\s*(?:UTC|GMT|Z)$/i, '$1T$2Z');
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? null : ms;
}

// The blocklist renderings of an NRD list: adblock `||domain^$opts`, hosts `0.0.0.0 domain`,
// dnsmasq `address=/domain/…` or `server=/domain/`, unbound `local-zone: "domain." …`.
const ADBLOCK = /^@?@?\|\|([^^$/|]+)/;
const HOSTS = /^(?:0\.0\.0\.0|127\.0\.0\.1|::1?|::)\s+(\S+)/;
const DNSMASQ = /^(?:address|server|local)=\/([^/]+)\//;
const UNBOUND = /^local-(?:zone|data):\s*"([^"\s]+?)\.?[\s"]/;

/** The domain an NRD list line names (the wildcard `*.domain` is read by parseDomainName). */
const listedDomain = (text: string) =>
  (ADBLOCK.exec(text) ?? HOSTS.exec(text) ?? DNSMASQ.exec(text) ?? UNBOUND.exec(text))?.[1] ?? text;

/**
 * An NRD list: `#` header lines, then one domain a line, in any of its renderings (listedDomain;
 * `!` comments and an `[Adblock Plus]` header). A header date (compile time) is the domains'
 * first_seen; one in the future or before 1990 is not kept, and the first domain after it says so.
 */
async function* nrdDomains(stream: Readable, progress?: IngestProgress): AsyncGenerator<ReadRecord<CheckedDomain>> {
  let listDate: number | null = null;
  let warnings: string[] = [];
  for await (const { line, number } of readLines(stream, (bytes) => progress?.advance(bytes))) {
    const text = line.trim();
    if (text === '' || text.startsWith('[')) continue;
    if (text.startsWith('#') || text.startsWith('!')) {
      const date = LIST_DATE.exec(text);
      const read = date ? headerDate(date[1]!) : null;
      if (read !== null) listDate = plausibleTime(read, (reason) => warnings.push(reason), 'list date');
      continue;
    }
    const record = checked(listedDomain(text), `line ${number}`, { origin: 'nrd', first_seen: listDate });
    if (warnings.length && typeof record.record !== 'string') {
      record.warnings = warnings;
      warnings = [];
    }
    yield record;
  }
}

/** The observed domains of a dnstwist result: the original and unregistered permutations are none. */
async function* dnstwistDomains(
  entries: AsyncIterable<{ location: string; entry: DnstwistPermutation | string }>,
  counts: Counts,
): AsyncGenerator<ReadRecord<CheckedDomain>> {
  for await (const { location, entry } of entries) {
    if (typeof entry === 'string') {
      yield { location, record: entry };
      continue;
    }
    if (typeof entry.domain !== 'string' || entry.domain.trim() === '') {
      yield { location, record: 'no domain' };
      continue;
    }
    if (isOriginal(entry.fuzzer)) continue;
    if (!isRegistered(entry)) {
      counts.unregistered++;
      continue;
    }
    const warnings: string[] = [];
    const record = checked(
      entry.domain.trim(),
      location,
      permutationDetails(entry, (reason) => warnings.push(reason)),
    );
    yield warnings.length ? { ...record, warnings } : record;
  }
}

type PhishingFormat = DetectableFormat & { name: 'nrd' | 'dnstwist' | 'dnstwist_csv' };

// The first entry of a domain list in any rendering: a name, `||name^`, `0.0.0.0 name`,
// `address=/name/`, `local-zone: "name."`.
const LIST_ENTRY = /^(?:[^\s,;{}"'<>]+|(?:0\.0\.0\.0|127\.0\.0\.1|::1?)\s+\S+|local-(?:zone|data):.*)$/;

/** Whether the head's first line that is no comment (`#`, `!`, `[Adblock Plus]`) is a list entry. */
function startsLikeList(head: string): boolean {
  const lines = head.split('\n');
  // The last line of a full head may be cut off: it does not count.
  if (head.length >= HEAD_BYTES) lines.pop();
  const first = lines.map((line) => line.trim()).find((line) => line !== '' && !/^[#![]/.test(line));
  return first === undefined || LIST_ENTRY.test(first);
}

const FORMATS: PhishingFormat[] = [
  {
    name: 'dnstwist',
    writtenBy: 'dnstwist --format json, or --json of versions before 2020',
    detect: (head) => /^\s*\[\s*(?:\]|\{)/.test(head) && /"fuzzer"\s*:/.test(head),
  },
  {
    name: 'dnstwist_csv',
    writtenBy: 'dnstwist --format csv, or --csv of versions before 2020',
    detect: (head) => isDnstwistCsvHeader(head.split('\n', 1)[0]!),
  },
  {
    name: 'nrd',
    writtenBy:
      'newly registered domain lists (xRuffKez/NRD and alike: plain, adblock, wildcard, hosts, dnsmasq, unbound) or dnstwist --format list',
    detect: startsLikeList,
  },
];

const FOLDER_FILES = new Set(['.txt', '.list', '.lst', '.domains', '.json', '.csv']);

export const phishingIngester: Ingester = {
  name: 'phishing',
  description:
    'newly observed domains for lookalike matching: NRD lists (plain, adblock, wildcard, hosts) or dnstwist results (JSON or CSV, any version), detected per input',
  formats: ['auto', ...FORMATS.map((format) => format.name)],
  async run(context, inputs, options) {
    const results: InputResult[] = [];
    const counts: Counts = { unregistered: 0 };
    for (const input of expandInputs(inputs, (file) => FOLDER_FILES.has(path.extname(file).toLowerCase()))) {
      const result = newInputResult(input);
      results.push(result);
      let records: AsyncIterable<ReadRecord<CheckedDomain>>;
      let opened: { stream: Readable; size: number | null };
      try {
        const peeked = await peekInput(input);
        opened = peeked;
        const format =
          options.format === 'auto' ? detectFormat('phishing', input, peeked.head, FORMATS).name : options.format;
        records =
          format === 'nrd'
            ? nrdDomains(peeked.stream, options.progress)
            : dnstwistDomains(
                format === 'dnstwist'
                  ? dnstwistJsonEntries(peeked.stream, input, options.progress)
                  : dnstwistCsvEntries(peeked.stream, options.progress),
                counts,
              );
      } catch (error) {
        failInput(result, error);
        options.progress?.finish(inputLine('domains', result));
        continue;
      }
      if (opened.size !== null) options.progress?.start(input, opened.size, 'bytes');
      await storeInBatches({
        result,
        records,
        batchSize: BATCH,
        write: (batch) => writeObservedDomains(context, batch),
        stream: opened.stream,
        noun: 'domains',
        progress: options.progress,
      });
    }
    const report = reportInputs('domains', results, { unregistered_skipped: counts.unregistered });
    if (counts.unregistered > 0)
      report.lines.push(`  ${counts.unregistered} unregistered permutations skipped (no DNS or WHOIS data)`);
    return report;
  },
};
