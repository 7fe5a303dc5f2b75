import { domainToASCII } from 'node:url';

/**
 * Lookalike domains of a watched domain, generated the way dnstwist (github.com/elceef/dnstwist,
 * Apache-2.0) does: each fuzzer rewrites the registrable domain's label (`acme-bank` of
 * `acme-bank.com`) and keeps its suffix, except `tld-swap` and `various`, which change the suffix.
 * Output names are ASCII (IDN labels in punycode), valid LDH names, never the watched name.
 */
export const FUZZERS = [
  'addition',
  'bitsquatting',
  'homoglyph',
  'hyphenation',
  'insertion',
  'omission',
  'repetition',
  'replacement',
  'subdomain',
  'transposition',
  'vowel-swap',
  'dictionary',
  'tld-swap',
  'various',
] as const;

export type Fuzzer = (typeof FUZZERS)[number];

/**
 * Keyboard rows; a key's neighbours are the keys beside it, the two above it (same column and
 * the next) and the two below it (the previous column and the same), which is how rows are
 * staggered. This gives dnstwist's QWERTY, QWERTZ and AZERTY neighbour tables.
 */
const KEYBOARDS = [
  ['1234567890', 'qwertyuiop', 'asdfghjkl', 'zxcvbnm'],
  ['1234567890', 'qwertzuiop', 'asdfghjkl', 'yxcvbnm'],
  ['1234567890', 'azertyuiop', 'qsdfghjklm', 'wxcvbn'],
];

function neighbourTable(rows: string[]): Map<string, string[]> {
  const table = new Map<string, string[]>();
  rows.forEach((row, r) => {
    [...row].forEach((key, c) => {
      const at = (rowIndex: number, column: number) => rows[rowIndex]?.[column] ?? '';
      const near = [at(r - 1, c), at(r - 1, c + 1), at(r, c - 1), at(r, c + 1), at(r + 1, c - 1), at(r + 1, c)].filter(
        (k) => k !== '',
      );
      table.set(key, near);
    });
  });
  return table;
}

const tables = KEYBOARDS.map(neighbourTable);
const NEIGHBOURS = new Map(
  [...tables[0]!.keys(), ...tables[2]!.keys()].map((key) => [
    key,
    [...new Set(tables.flatMap((table) => table.get(key) ?? []))],
  ]),
);

/** The keys next to a key on any of the three layouts. */
export const neighboursOf = (char: string): string[] => NEIGHBOURS.get(char) ?? [];

/**
 * Characters that look like a letter or digit: ASCII look-alikes (`rn` for `m`, `0` for `o`) and
 * Latin letters with marks or small capitals that browsers show in IDN names. The set follows
 * dnstwist's glyph table; matching also folds any marked letter back to its base (see
 * skeletonOf), so an IDN lookalike with glyphs not listed here is still found.
 */
const GLYPHS: Record<string, string> = {
  '0': 'o',
  '1': 'l i',
  '2': 'ƻ',
  '3': '8',
  '5': 'ƽ',
  '6': '9',
  '8': '3',
  '9': '6',
  a: 'à á â ã ä å ɑ ạ ǎ ă ȧ ą ə',
  b: 'd lb ʙ ɓ ḃ ḅ ḇ ƅ',
  c: 'e ƈ ċ ć ç č ĉ ᴄ',
  d: 'b cl dl ɗ đ ď ɖ ḑ ḋ ḍ ḏ ḓ',
  e: 'c é è ê ë ē ĕ ě ė ẹ ę ȩ ɇ ḛ',
  f: 'ƒ ḟ',
  g: 'q ɢ ɡ ġ ğ ǵ ģ ĝ ǧ ǥ',
  h: 'lh ĥ ȟ ħ ɦ ḧ ḩ ⱨ ḣ ḥ ḫ ẖ',
  i: '1 l í ì ï ı ɩ ǐ ĭ ỉ ị ɨ ȋ ī ɪ',
  j: 'ʝ ǰ ɉ ĵ',
  k: 'lk ik lc ḳ ḵ ⱪ ķ ᴋ',
  l: '1 i ɫ ł',
  m: 'n nn rn rr ṁ ṃ ᴍ ɱ ḿ',
  n: 'm r ń ṅ ṇ ṉ ñ ņ ǹ ň ꞑ',
  o: '0 ȯ ọ ỏ ơ ó ö ᴏ',
  p: 'ƿ ƥ ṕ ṗ',
  q: 'g ʠ',
  r: 'ʀ ɼ ɽ ŕ ŗ ř ɍ ɾ ȓ ȑ ṙ ṛ ṟ',
  s: 'ʂ ś ṣ ṡ ș ŝ š ꜱ',
  t: 'ţ ŧ ṫ ṭ ț ƫ',
  u: 'ᴜ ǔ ŭ ü ʉ ù ú û ũ ū ų ư ů ű ȕ ȗ ụ',
  v: 'ṿ ⱱ ᶌ ṽ ⱴ ᴠ',
  w: 'vv ŵ ẁ ẃ ẅ ⱳ ẇ ẉ ẘ ᴡ',
  x: 'ẋ ẍ',
  y: 'ʏ ý ÿ ŷ ƴ ȳ ɏ ỿ ẏ ỵ',
  z: 'ʐ ż ź ᴢ ƶ ẓ ẕ ⱬ',
};

const glyphsOf = new Map(Object.entries(GLYPHS).map(([char, glyphs]) => [char, glyphs.split(' ')]));

// Letters of other scripts that render like Latin ones: whole-script homographs (`аррӏе` in
// Cyrillic) are the classic IDN attack, and dnstwist generates none of them.
const OTHER_SCRIPT_LOOKALIKES: Record<string, string> = {
  а: 'a',
  в: 'b',
  с: 'c',
  ԁ: 'd',
  е: 'e',
  ғ: 'f',
  һ: 'h',
  і: 'i',
  ј: 'j',
  к: 'k',
  ӏ: 'l',
  м: 'm',
  п: 'n',
  о: 'o',
  р: 'p',
  ԛ: 'q',
  г: 'r',
  ѕ: 's',
  т: 't',
  ц: 'u',
  ѵ: 'v',
  ԝ: 'w',
  х: 'x',
  у: 'y',
  з: '3',
  α: 'a',
  β: 'b',
  ε: 'e',
  η: 'n',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
  γ: 'y',
  // Armenian and Cyrillic Komi letters that dnstwist's glyph table used before 2020 (`glօbex`).
  օ: 'o',
  ս: 'u',
  հ: 'h',
  ԍ: 'g',
};

const BASE_OF = new Map<string, string>(Object.entries(OTHER_SCRIPT_LOOKALIKES));
for (const [char, glyphs] of glyphsOf)
  for (const glyph of glyphs) if (glyph.length === 1 && glyph > '\x7f') BASE_OF.set(glyph, char);

/**
 * The ASCII a Unicode label reads as (UTS #39's "skeleton" idea on a small table): marks are
 * stripped (`ů` → `u`), other lookalike letters mapped (`ɑ` → `a`, Cyrillic `о` → `o`). Letters
 * with no lookalike stay as they are, so the result of a label in another language is no brand.
 */
export function skeletonOf(label: string): string {
  let out = '';
  for (const char of label.normalize('NFD').replace(/\p{M}/gu, '')) out += BASE_OF.get(char) ?? char;
  return out;
}

/** The word list of the dictionary fuzzer: what phishing domains add to a brand. */
export const DICTIONARY_WORDS = [
  'login',
  'signin',
  'secure',
  'security',
  'account',
  'accounts',
  'verify',
  'verification',
  'support',
  'help',
  'update',
  'online',
  'bank',
  'banking',
  'pay',
  'payment',
  'wallet',
  'billing',
  'auth',
  'id',
  'my',
  'portal',
  'service',
  'customer',
  'mail',
  'web',
  'app',
  'mobile',
  'official',
  'access',
  'confirm',
  'alert',
  'card',
  'invoice',
];

/** Suffixes of the tld-swap fuzzer: the most registered and the most abused ones. */
export const SWAP_SUFFIXES = [
  'com',
  'net',
  'org',
  'info',
  'biz',
  'co',
  'io',
  'me',
  'us',
  'uk',
  'co.uk',
  'de',
  'fr',
  'nl',
  'eu',
  'ru',
  'cn',
  'in',
  'br',
  'au',
  'xyz',
  'top',
  'online',
  'site',
  'shop',
  'store',
  'club',
  'app',
  'live',
  'icu',
  'vip',
  'cc',
  'pw',
  'tk',
  'ml',
  'ga',
  'cf',
  'gq',
  'support',
  'services',
  'website',
  'tech',
  'space',
  'fun',
  'link',
  'click',
  'help',
  'cloud',
  'digital',
  'agency',
];

const VOWELS = 'aeiou';
const BIT_CHARS = new Set('abcdefghijklmnopqrstuvwxyz0123456789-');
const ADDITION_CHARS = '0123456789abcdefghijklmnopqrstuvwxyz';

function* addition(label: string) {
  for (const char of ADDITION_CHARS) yield label + char;
}

function* bitsquatting(label: string) {
  for (let i = 0; i < label.length; i++) {
    for (let bit = 1; bit < 256; bit <<= 1) {
      const flipped = String.fromCharCode(label.charCodeAt(i) ^ bit);
      if (BIT_CHARS.has(flipped)) yield label.slice(0, i) + flipped + label.slice(i + 1);
    }
  }
}

/**
 * dnstwist's windowed replacement: within a run of the label shorter than the label, every
 * occurrence of one character becomes one glyph (`youtube` → `yoůtůbe` through the run `utu`).
 * The distinct results are the contiguous ranges of a character's occurrences, made here
 * directly (dnstwist makes them once per window). dnstwist repeats the whole step on its own
 * output (two different characters replaced); that second round is left to matching, which
 * folds marked letters back to their base (skeletonOf) and so finds any mix.
 */
function* homoglyph(label: string) {
  const chars = [...label];
  const positions = new Map<string, number[]>();
  chars.forEach((char, i) => positions.set(char, [...(positions.get(char) ?? []), i]));
  for (const [char, at] of positions) {
    const glyphs = glyphsOf.get(char) ?? [];
    for (let first = 0; first < at.length; first++) {
      for (let last = first; last < at.length && at[last]! - at[first]! + 1 < chars.length; last++) {
        for (const glyph of glyphs) {
          const copy = chars.slice();
          for (let k = first; k <= last; k++) copy[at[k]!] = glyph;
          yield copy.join('');
        }
      }
    }
  }
}

function* hyphenation(label: string) {
  for (let i = 1; i < label.length; i++) yield `${label.slice(0, i)}-${label.slice(i)}`;
}

function* insertion(label: string) {
  for (let i = 1; i < label.length - 1; i++) {
    const before = label.slice(0, i);
    const char = label[i]!;
    const after = label.slice(i + 1);
    for (const near of neighboursOf(char)) {
      yield before + near + char + after;
      yield before + char + near + after;
    }
  }
}

function* omission(label: string) {
  for (let i = 0; i < label.length; i++) yield label.slice(0, i) + label.slice(i + 1);
}

function* repetition(label: string) {
  for (let i = 0; i < label.length; i++) yield label.slice(0, i) + label[i] + label.slice(i);
}

function* replacement(label: string) {
  for (let i = 0; i < label.length; i++) {
    for (const near of neighboursOf(label[i]!)) yield label.slice(0, i) + near + label.slice(i + 1);
  }
}

/** A dot inside the label (`you.tube.com`), never beside a hyphen. */
function* subdomain(label: string) {
  for (let i = 1; i < label.length - 1; i++) {
    if (label[i] !== '-' && label[i - 1] !== '-') yield `${label.slice(0, i)}.${label.slice(i)}`;
  }
}

function* transposition(label: string) {
  for (let i = 0; i < label.length - 1; i++) yield label.slice(0, i) + label[i + 1] + label[i] + label.slice(i + 2);
}

function* vowelSwap(label: string) {
  for (let i = 0; i < label.length; i++) {
    if (!VOWELS.includes(label[i]!)) continue;
    for (const vowel of VOWELS) yield label.slice(0, i) + vowel + label.slice(i + 1);
  }
}

/** Brand plus a word (`acme-bank-login`, `loginacme-bank`); a hyphenated brand also swaps its first or last part. */
function* dictionary(label: string) {
  for (const word of DICTIONARY_WORDS) {
    if (label.startsWith(word) && label.endsWith(word)) continue;
    yield `${label}-${word}`;
    yield label + word;
    yield `${word}-${label}`;
    yield word + label;
  }
  if (!label.includes('-')) return;
  const parts = label.split('-');
  for (const word of DICTIONARY_WORDS) {
    yield `${parts.slice(0, -1).join('-')}-${word}`;
    yield `${word}-${parts.slice(1).join('-')}`;
  }
}

/**
 * The dictionary fuzzer run backwards: for a label, each brand it would be a dictionary
 * permutation of, as `found(form, base)`: `brand` when `base` would be the whole brand label
 * (`acme-bank-login`, `loginacme-bank`), `head` when `base` would be a hyphenated brand without
 * its last part (`acme-login` of acme-bank), `tail` without its first part (`login-bank`).
 * Matching uses it instead of holding every brand's ~150 dictionary names.
 */
export function dictionaryBases(label: string, found: (form: 'brand' | 'head' | 'tail', base: string) => void): void {
  for (const word of WORDS_ENDING.get(label[label.length - 1]!) ?? []) {
    if (label.length <= word.length + 1 || !label.endsWith(word)) continue;
    const before = label.slice(0, -word.length);
    if (!before.endsWith('-')) brandBase(before, word, found);
    else {
      brandBase(before.slice(0, -1), word, found);
      found('head', before.slice(0, -1));
    }
  }
  for (const word of WORDS_STARTING.get(label[0]!) ?? []) {
    if (label.length <= word.length + 1 || !label.startsWith(word)) continue;
    const after = label.slice(word.length);
    if (!after.startsWith('-')) brandBase(after, word, found);
    else {
      brandBase(after.slice(1), word, found);
      found('tail', after.slice(1));
    }
  }
}

const wordsBy = (char: (word: string) => string) => {
  const map = new Map<string, string[]>();
  for (const word of DICTIONARY_WORDS) map.set(char(word), [...(map.get(char(word)) ?? []), word]);
  return map;
};
// A label is compared only with the words that end (start) with its last (first) letter.
const WORDS_ENDING = wordsBy((word) => word[word.length - 1]!);
const WORDS_STARTING = wordsBy((word) => word[0]!);

// The fuzzer leaves out a word the brand begins and ends with (`pay` for the brand `pay`).
function brandBase(base: string, word: string, found: (form: 'brand', base: string) => void) {
  if (!(base.startsWith(word) && base.endsWith(word))) found('brand', base);
}

/** The label rewrites, in dnstwist's order: a name two fuzzers make keeps the first one's name. */
const LABEL_FUZZERS: [Fuzzer, (label: string) => Iterable<string>][] = [
  ['addition', addition],
  ['bitsquatting', bitsquatting],
  ['homoglyph', homoglyph],
  ['hyphenation', hyphenation],
  ['insertion', insertion],
  ['omission', omission],
  ['repetition', repetition],
  ['replacement', replacement],
  ['subdomain', subdomain],
  ['transposition', transposition],
  ['vowel-swap', vowelSwap],
  ['dictionary', dictionary],
];

// dnstwist's final filter: 1-63 LDH characters per label, no hyphen at either end.
const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
// eslint-disable-next-line no-control-regex -- the ASCII range itself
const NON_ASCII = /[^\x00-\x7f]/;

/** 1-63 characters between dots, no hyphen at either end of a label. */
function wellFormed(labels: string): boolean {
  for (let start = 0; ;) {
    const dot = labels.indexOf('.', start);
    const end = dot === -1 ? labels.length : dot;
    if (end === start || end - start > 63 || labels.charCodeAt(start) === 45 || labels.charCodeAt(end - 1) === 45)
      return false;
    if (dot === -1) return true;
    start = dot + 1;
  }
}

/**
 * A generated label (or dotted labels) in ASCII, or null when it makes no valid host name. An
 * ASCII variant is made of an LDH label with letters, digits, hyphens and dots, so only its
 * shape is checked; the rest is punycoded and checked whole.
 */
function asciiLabels(labels: string): string | null {
  if (!NON_ASCII.test(labels)) return wellFormed(labels) ? labels : null;
  const ascii = domainToASCII(labels);
  if (ascii === '') return null;
  for (const label of ascii.split('.')) if (!LDH_LABEL.test(label)) return null;
  return ascii;
}

/** What the fuzzers start from: the registrable domain's label (Unicode for an IDN) and its public suffix. */
export interface FuzzTarget {
  /** The label as a person reads it (`münchen`, not `xn--mnchen-3ya`). */
  label: string;
  suffix: string;
}

/**
 * Every lookalike of `label.suffix` with the first fuzzer that makes it, as a Map from the ASCII
 * name to the fuzzer; the watched name itself is left out. For a matcher that finds some kinds
 * another way, `asciiOnly` leaves out the names that need punycode (IDN homoglyphs of an ASCII
 * label: found by their skeleton; punycode is the costly part) and `withoutDictionary` the
 * dictionary names (found by dictionaryBases). No name the other fuzzers make is a dictionary
 * name with another fuzzer's name, so leaving them out renames nothing.
 */
export function generatePermutations(
  target: FuzzTarget,
  options: { asciiOnly?: boolean; withoutDictionary?: boolean } = {},
): Map<string, Fuzzer> {
  const { label, suffix } = target;
  const original = `${asciiLabels(label)}.${suffix}`;
  const result = new Map<string, Fuzzer>();
  const add = (fuzzer: Fuzzer, labels: string, under: string) => {
    if (options.asciiOnly && NON_ASCII.test(labels)) return;
    const ascii = asciiLabels(labels);
    if (ascii === null) return;
    const name = `${ascii}.${under}`;
    if (name !== original && name.length <= 253 && !result.has(name)) result.set(name, fuzzer);
  };
  for (const [fuzzer, fuzz] of LABEL_FUZZERS) {
    if (fuzzer === 'dictionary' && options.withoutDictionary) continue;
    for (const variant of fuzz(label)) add(fuzzer, variant, suffix);
  }
  for (const swapped of SWAP_SUFFIXES) if (swapped !== suffix) add('tld-swap', label, swapped);
  // dnstwist's "various": the suffix run into the label (`youtubecom.com`, `acmeco.uk`), a
  // two-level suffix cut to its last label (`acme.uk`), a country-code brand's `-cc.com`, and
  // (before 2020) the `www` run into the label.
  for (const www of ['ww', 'www', 'www-']) add('various', www + label, suffix);
  if (suffix.includes('.')) {
    const [first, ...rest] = suffix.split('.');
    add('various', label, rest.at(-1)!);
    add('various', label + first, rest.join('.'));
  } else {
    add('various', label + suffix, suffix);
    if (suffix !== 'com') add('various', `${label}-${suffix}`, 'com');
  }
  return result;
}
