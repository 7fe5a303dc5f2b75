import { domainToUnicode } from 'node:url';
import { parseDomainName, type DomainName } from '../common/domains/domain-name.ts';
import { createNameTable } from './name-table.ts';
import { dictionaryBases, FUZZERS, generatePermutations, skeletonOf } from './permutations.ts';

/**
 * Which watched domains an observed domain is a lookalike of. Every watched domain's dnstwist
 * permutations go into one table (candidate name → watched domains, name-table.ts), so an
 * observed name costs a hash lookup or two however many domains are watched. Kinds that can
 * be recognised from the observed name are not held but checked, also by lookup, under the
 * fuzzer name the permutation would have:
 * - dictionary: the name's label less a dictionary word (`acme-bank-login` → `acme-bank`);
 * - the brand as a whole label or hyphen-separated parts of one: `acme-bank.shop` is a
 *   tld-swap under any suffix; `acmebank-secure.com` combosquatting (the brand with other
 *   words); `acme-bank.com.login-verify.net` levelsquatting (the brand in a subdomain);
 * - IDN homoglyphs: a punycode name whose letters read as the brand (skeletonOf), however
 *   many glyphs it mixes, in any script.
 * The watched domain itself and its own subdomains are never lookalikes of it.
 */

/** Fuzzers of the matcher beyond dnstwist's: the brand joined to words or put in a subdomain. */
export const MATCH_FUZZERS = [...FUZZERS, 'combosquatting', 'levelsquatting'] as const;
export type MatchFuzzer = (typeof MATCH_FUZZERS)[number];

const FUZZER_CODE = new Map<MatchFuzzer, number>(MATCH_FUZZERS.map((fuzzer, i) => [fuzzer, i]));
// A candidate's entry packs the watched domain's position and the fuzzer in one small integer
// (a V8 small integer up to 2^30: 33 million watched domains).
const FUZZER_SLOTS = 32;

/**
 * Brands shorter than this are not looked for inside other names: `ing` or `bbc` is a part of
 * too many unrelated labels. Their permutations are still matched.
 */
export const MIN_BRAND_LENGTH = 4;

/** One watched domain: the fuzz target and what the brand checks compare with. */
interface Watched {
  name: DomainName;
  /** The registrable label as a person reads it (Unicode for an IDN). */
  label: string;
  /** The label's letters without hyphens (`acmebank`): how the brand checks see it. */
  brand: string;
}

export interface Lookalike {
  /** Position of the watched domain in the list the index was built from. */
  watched: number;
  fuzzer: MatchFuzzer;
  /** The brand appears as (part of) a label in front of the registrable domain. */
  brandInSubdomain: boolean;
}

/** An observed name as stored: the whole name and its registrable domain. */
export interface ObservedName {
  domain: string;
  registrable: string;
}

const unicodeLabel = (asciiLabel: string) =>
  asciiLabel.startsWith('xn--') ? domainToUnicode(asciiLabel) || asciiLabel : asciiLabel;

type Entries = number | number[];

/** The registrable domain's label: what comes before its first dot. */
const labelOf = (registrable: string) => registrable.slice(0, registrable.indexOf('.'));

// The small maps: a key's watched domains, one number until there are more.
const add = (map: Map<string, Entries>, key: string, entry: number) => {
  const existing = map.get(key);
  if (existing === undefined) map.set(key, entry);
  else if (typeof existing === 'number') map.set(key, [existing, entry]);
  else existing.push(entry);
};

/** The watched domains, and the tables and maps that lookalikesOf looks observed names up in. */
function indexWatched(domains: string[]) {
  const watched: Watched[] = domains.map((domain) => {
    const name = parseDomainName(domain);
    if (typeof name === 'string') throw new Error(`${domain}: ${name}`);
    const label = unicodeLabel(name.label);
    return { name, label, brand: label.replaceAll('-', '') };
  });

  // Some 350 names a watched domain: a typed-array table, not a Map (name-table.ts says why).
  const candidates = createNameTable(watched.length * 350);
  const brands = new Map<string, Entries>();
  const originals = new Map<string, Entries>();
  // Dictionary bases (dictionaryBases) with their suffix: whole brands, brands without their
  // last part, brands without their first part.
  const dictionary = {
    brand: new Map<string, Entries>(),
    head: new Map<string, Entries>(),
    tail: new Map<string, Entries>(),
  };
  let longestBrand = 0;
  watched.forEach((w, i) => {
    // For an ASCII brand the skeleton check finds every IDN homoglyph and dictionaryBases every
    // dictionary name; when it has MIN_BRAND_LENGTH or more the brand check finds every suffix
    // (tld-swap); all under the fuzzer names the permutations would have. The table holds the
    // rest: half the names, none that needs punycode.
    const ascii = /^[a-z0-9-]+$/.test(w.label);
    const brandChecked = ascii && w.brand.length >= MIN_BRAND_LENGTH;
    for (const [candidate, fuzzer] of generatePermutations(
      { label: w.label, suffix: w.name.suffix },
      { asciiOnly: ascii, withoutDictionary: ascii },
    )) {
      if (fuzzer === 'tld-swap' && brandChecked) continue;
      candidates.add(candidate, i * FUZZER_SLOTS + FUZZER_CODE.get(fuzzer)!);
    }
    if (ascii) {
      const suffix = `.${w.name.suffix}`;
      add(dictionary.brand, w.label + suffix, i);
      const parts = w.label.split('-');
      if (parts.length > 1) {
        add(dictionary.head, parts.slice(0, -1).join('-') + suffix, i);
        add(dictionary.tail, parts.slice(1).join('-') + suffix, i);
      }
    }
    const skeleton = skeletonOf(w.label);
    add(originals, `${skeleton}.${w.name.suffix}`, i);
    // An IDN brand written in plain letters (`munchen.de` for `münchen.de`) reads the same.
    if (skeleton !== w.label && /^[a-z0-9-]+$/.test(skeleton))
      candidates.add(`${skeleton}.${w.name.suffix}`, i * FUZZER_SLOTS + FUZZER_CODE.get('homoglyph')!);
    if (w.brand.length >= MIN_BRAND_LENGTH) {
      add(brands, w.brand, i);
      longestBrand = Math.max(longestBrand, w.brand.length);
    }
  });
  return { watched, candidates, brands, originals, dictionary, longestBrand };
}

export function createLookalikeIndex(domains: string[]) {
  const { watched, candidates, brands, originals, dictionary, longestBrand } = indexWatched(domains);

  // What one lookalikesOf call has found so far (it runs to completion, so one variable serves
  // every call); null until something is found: most names are no lookalike and allocate nothing.
  let found: Lookalike[] | null = null;
  function note(index: number, fuzzer: MatchFuzzer, brandInSubdomain: boolean) {
    found ??= [];
    for (const lookalike of found) {
      if (lookalike.watched !== index) continue;
      // The first finding names the fuzzer; the brand in a subdomain adds to any.
      lookalike.brandInSubdomain ||= brandInSubdomain;
      return;
    }
    found.push({ watched: index, fuzzer, brandInSubdomain });
  }
  const noteCandidate = (entry: number) =>
    note(Math.floor(entry / FUZZER_SLOTS), MATCH_FUZZERS[entry % FUZZER_SLOTS]!, false);

  function noteBrand(value: Entries | undefined, fuzzer: MatchFuzzer, inSubdomain: boolean) {
    if (value === undefined) return;
    if (typeof value === 'number') note(value, fuzzer, inSubdomain);
    else for (const index of value) note(index, fuzzer, inSubdomain);
  }

  // The registrable domain's suffix (`.com`) while dictionaryBases reports a label's bases.
  let suffixOfLabel = '';
  const noteDictionary = (form: 'brand' | 'head' | 'tail', base: string) =>
    noteBrand(dictionary[form].get(base + suffixOfLabel), 'dictionary', false);

  /**
   * Notes each brand made of consecutive hyphen-separated parts of a label: in a subdomain
   * label levelsquatting, in the registrable label tld-swap when it is the whole label, else
   * combosquatting.
   */
  function noteBrandsIn(label: string, inSubdomain: boolean) {
    if (label.length < MIN_BRAND_LENGTH) return;
    if (!label.includes('-')) {
      noteBrand(brands.get(label), inSubdomain ? 'levelsquatting' : 'tld-swap', inSubdomain);
      return;
    }
    const parts = label.split('-');
    for (let first = 0; first < parts.length; first++) {
      let joined = '';
      for (let last = first; last < parts.length; last++) {
        joined += parts[last];
        if (joined.length > longestBrand) break;
        const whole = first === 0 && last === parts.length - 1;
        noteBrand(
          brands.get(joined),
          inSubdomain ? 'levelsquatting' : whole ? 'tld-swap' : 'combosquatting',
          inSubdomain,
        );
      }
    }
  }

  return {
    size: watched.length,
    get candidates() {
      return candidates.size;
    },

    watched(index: number): Watched {
      return watched[index]!;
    },

    /** The watched domains the name is a lookalike of, one entry per watched domain. */
    lookalikesOf(observed: ObservedName): Lookalike[] {
      found = null;
      const { domain, registrable } = observed;
      candidates.find(domain, noteCandidate);
      // A host under a lookalike (`login.acme-bnak.com`) is that lookalike's.
      if (domain !== registrable) candidates.find(registrable, noteCandidate);

      const label = labelOf(registrable);
      suffixOfLabel = registrable.slice(label.length);
      dictionaryBases(label, noteDictionary);
      noteBrandsIn(label, false);
      if (domain !== registrable)
        for (const sub of domain.slice(0, domain.length - registrable.length - 1).split('.')) noteBrandsIn(sub, true);

      if (label.startsWith('xn--')) {
        const skeleton = `${skeletonOf(unicodeLabel(label))}${registrable.slice(label.length)}`;
        noteBrand(originals.get(skeleton), 'homoglyph', false);
      }

      if (found === null) return [];
      // Never the watched domain itself or a host of its own.
      return (found as Lookalike[]).filter((lookalike) => watched[lookalike.watched]!.name.registrable !== registrable);
    },
  };
}

export type LookalikeIndex = ReturnType<typeof createLookalikeIndex>;

/**
 * Damerau-Levenshtein distance in its optimal-string-alignment form (an adjacent swap costs
 * one; a swapped pair is not edited again), over code points.
 */
export function editDistance(a: string, b: string): number {
  const s = [...a];
  const t = [...b];
  let before = new Array<number>(t.length + 1).fill(0);
  let previous = Array.from({ length: t.length + 1 }, (_, j) => j);
  for (let i = 1; i <= s.length; i++) {
    const current = [i];
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let best = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) best = Math.min(best, before[j - 2]! + 1);
      current.push(best);
    }
    before = previous;
    previous = current;
  }
  return previous[t.length]!;
}

/** How much a lookalike of each kind looks like the brand to a person, 0-100. */
const FUZZER_WEIGHT: Record<MatchFuzzer, number> = {
  homoglyph: 100,
  transposition: 90,
  omission: 85,
  repetition: 85,
  'vowel-swap': 85,
  replacement: 80,
  insertion: 80,
  hyphenation: 85,
  subdomain: 80,
  levelsquatting: 80,
  dictionary: 80,
  combosquatting: 75,
  'tld-swap': 75,
  addition: 70,
  various: 70,
  bitsquatting: 60,
};

/**
 * A lookalike's score, 0-100: 70% how convincing its kind is, 20% how close its label is to the
 * brand's (1 - distance / longer length), 5 when the brand also sits in a subdomain, 5 when the
 * domain has mail servers (it can send or receive phishing mail).
 */
export function lookalikeScore(input: {
  fuzzer: MatchFuzzer;
  distance: number;
  longer: number;
  brandInSubdomain: boolean;
  hasMx: boolean;
}): number {
  const closeness = input.longer === 0 ? 0 : Math.max(0, 1 - input.distance / input.longer);
  const score =
    FUZZER_WEIGHT[input.fuzzer] * 0.7 + closeness * 20 + (input.brandInSubdomain ? 5 : 0) + (input.hasMx ? 5 : 0);
  return Math.min(100, Math.round(score));
}

/** Distance and score of one lookalike of a watched domain. */
export function measureLookalike(
  index: LookalikeIndex,
  lookalike: Lookalike,
  observed: ObservedName & { hasMx: boolean },
) {
  const target = index.watched(lookalike.watched);
  const label = unicodeLabel(labelOf(observed.registrable));
  const distance = editDistance(label, target.label);
  const longer = Math.max([...label].length, [...target.label].length);
  return {
    distance,
    score: lookalikeScore({
      fuzzer: lookalike.fuzzer,
      distance,
      longer,
      brandInSubdomain: lookalike.brandInSubdomain,
      hasMx: observed.hasMx,
    }),
  };
}
