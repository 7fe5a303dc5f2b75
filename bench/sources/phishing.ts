import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';

/**
 * Synthetic newly-registered-domain lists for `npm run bench -- sources`: files in the NRD list
 * format (`#` header with a compile time, then one domain a line) of at most 1,000,000 domains,
 * every name unique. bench/sources/phishing-match.ts draws its observed domains from the same
 * generator.
 */
const DOMAINS_PER_FILE = 1_000_000;

const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ra',
  'ven',
  'tor',
  'sun',
  'bel',
  'dor',
  'fin',
  'gra',
  'hol',
  'jet',
  'lux',
  'mar',
  'nor',
  'pix',
  'qui',
  'rex',
  'sol',
  'tan',
  'vik',
  'zen',
  'bri',
];
const WORDS = [
  'shop',
  'store',
  'deals',
  'studio',
  'garden',
  'travel',
  'crypto',
  'health',
  'media',
  'labs',
  'home',
  'auto',
  'cloud',
  'games',
  'online',
  'group',
];
const SUFFIXES = [
  'com',
  'com',
  'com',
  'com',
  'net',
  'org',
  'xyz',
  'online',
  'shop',
  'info',
  'top',
  'store',
  'site',
  'de',
  'co.uk',
  'io',
];

/** Domain `i` of a newly-registered-domain feed: two syllables, a word, a base-36 tail, a suffix. */
export function syntheticDomain(i: number): string {
  const syllable = (k: number) => SYLLABLES[(i * 7 + k * 13) % SYLLABLES.length]!;
  const word = WORDS[(i >> 3) % WORDS.length]!;
  const label =
    i % 3 === 0
      ? `${syllable(1)}${syllable(2)}-${word}${i.toString(36)}`
      : `${syllable(1)}${word}${syllable(2)}${i.toString(36)}`;
  return `${label}.${SUFFIXES[i % SUFFIXES.length]}`;
}

export const benchSource = {
  source: 'phishing',
  ingester: 'phishing',
  format: 'nrd',
  unit: 'domains',
  async writeInput(dir: string, count: number): Promise<string[]> {
    const files: string[] = [];
    for (let n = 0, written = 0; written < count; n++) {
      const file = path.join(dir, `nrd-${String(n + 1).padStart(4, '0')}.txt`);
      const inFile = Math.min(DOMAINS_PER_FILE, count - written);
      const out = createWriteStream(file);
      out.write(
        `# Newly Registered Domains (synthetic)\n# Time of Compilation: 2026-01-15 06:00:00 UTC\n# Number of entries: ${inFile}\n#\n`,
      );
      for (let i = 0; i < inFile; i++, written++)
        if (!out.write(`${syntheticDomain(written)}\n`)) await once(out, 'drain');
      out.end();
      await once(out, 'finish');
      files.push(file);
    }
    return files;
  },
};
