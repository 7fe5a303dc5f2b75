import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { domainToASCII } from 'node:url';
import { repoRoot } from './cli.ts';

/** A dnstwist JSON scan to check the permutation generator and the lookalike index against. */
export interface DnstwistScan {
  name: string;
  watched: { label: string; suffix: string };
  /** `fuzzer punycode-domain` of every permutation, the original left out, fuzzers lower-cased. */
  pairs: string[];
}

const scanOf = (file: string, name: string, watched: DnstwistScan['watched']): DnstwistScan => {
  // Before 2020 dnstwist wrote `domain-name`, capitalised fuzzers and `Original*`, and IDNs in Unicode.
  const entries = JSON.parse(readFileSync(file, 'utf8')) as {
    fuzzer: string;
    domain?: string;
    'domain-name'?: string;
  }[];
  const pairs = entries
    .map((entry) => [entry.fuzzer.replace('*', '').toLowerCase(), domainToASCII(entry.domain ?? entry['domain-name']!)])
    .filter(([fuzzer]) => fuzzer !== 'original')
    .map(([fuzzer, domain]) => `${fuzzer} ${domain}`);
  return { name, watched, pairs };
};

const ours = (file: string) =>
  scanOf(path.join(repoRoot, 'test', 'fixtures', 'phishing', file), `test/fixtures/phishing/${file}`, {
    label: 'globex-pay',
    suffix: 'com',
  });

const sharedYoutube = path.join(repoRoot, '..', 'shared', 'fixtures', 'dnstwist', 'youtube.com.dnstwist.json');

/**
 * Our hand-written scans of globex-pay.com always; the real dnstwist scan of youtube.com
 * (../shared/fixtures/SOURCES.md, 235 permutations) as well where it is, read in place.
 */
export const dnstwistScans = (): DnstwistScan[] => [
  ours('globex-pay.com.dnstwist.json'),
  ours('globex-pay.com.dnstwist-2019.json'),
  ...(existsSync(sharedYoutube)
    ? [scanOf(sharedYoutube, '../shared/fixtures/dnstwist/youtube.com', { label: 'youtube', suffix: 'com' })]
    : []),
];
