/**
 * Does an app listing use a brand? Exact uses of the brand's words in the app's name, app id,
 * developer or description, and near misses ("Acme Bnak") in its name, app id or developer
 * (docs/sources.md "App stores" states the same rules for users).
 */

// Letters of other scripts drawn like Latin ones: an app named "Асме Bank" in Cyrillic is
// still a lookalike of "Acme Bank". Accented Latin letters are folded by NFKD instead.
const LOOKALIKE_LETTERS: Record<string, string> = {
  а: 'a',
  в: 'b',
  е: 'e',
  к: 'k',
  м: 'm',
  н: 'h',
  о: 'o',
  р: 'p',
  с: 'c',
  т: 't',
  у: 'y',
  х: 'x',
  і: 'i',
  ј: 'j',
  ѕ: 's',
  ԁ: 'd',
  ԛ: 'q',
  ԝ: 'w',
  α: 'a',
  β: 'b',
  ε: 'e',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
};

/**
 * The words of a text as the matcher compares them: lowercase, accents removed, lookalike
 * letters of other scripts replaced, split on anything that is not a letter or digit.
 * "AcmeBank" is one word ("acmebank"); "com.acme-bank.app" is three.
 */
export function wordsOf(text: string): string[] {
  const folded = text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^\p{ASCII}]/gu, (letter) => LOOKALIKE_LETTERS[letter] ?? letter);
  return folded.split(/[^\p{L}\p{N}]+/u).filter((word) => word !== '');
}

/** A text's words, one space apart, as the store keeps a description. */
export const normalText = (text: string): string => wordsOf(text).join(' ');

/**
 * Optimal string alignment distance (Levenshtein plus adjacent transpositions, so "bnak" is one
 * edit from "bank"), or `max + 1` as soon as it must exceed `max`.
 */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, before[j - 2]! + 1);
      current.push(value);
      rowMin = Math.min(rowMin, value);
    }
    if (rowMin > max) return max + 1;
    before = previous;
    previous = current;
  }
  return Math.min(previous[b.length]!, max + 1);
}

/** Edits a near miss of the whole brand may have. */
export const MAX_EDITS = 2;

/** Edits a near miss of one word may have: none for short words, where one edit is another word. */
export const editsAllowed = (word: string): number => (word.length <= 3 ? 0 : word.length <= 7 ? 1 : MAX_EDITS);

export interface Brand {
  /** As the rule gave it, for reasons. */
  text: string;
  words: string[];
  /** The words written together: "acmebank". */
  glued: string;
}

/** The brand of a rule's query, or null when it has no letter or digit. */
export function brandOf(query: string): Brand | null {
  const words = wordsOf(query);
  return words.length ? { text: query.trim(), words, glued: words.join('') } : null;
}

/**
 * The brand's letters and digits as whole words, however they are spaced or cased ("Acme
 * Bank", "AcmeBank", "acme-bank" for "Acme Bank" or "AcmeBank"). A brand of two or more words
 * is also found inside a word ("acmebankwallet", "myacmebank"); a one-word brand only as a
 * whole word, or "chase" would be found in "purchase".
 */
export function containsBrand(brand: Brand, words: string[]): boolean {
  const { glued } = brand;
  if (brand.words.length > 1 && words.some((word) => word.includes(glued))) return true;
  // Words in a row written together: a run stops as soon as it is no start of the brand.
  for (let i = 0; i < words.length; i++) {
    let joined = '';
    for (let j = i; j < words.length; j++) {
      joined += words[j];
      if (joined === glued) return true;
      if (!glued.startsWith(joined)) break;
    }
  }
  return false;
}

/** A near miss: the words found and how many edits they are from the brand. */
export interface NearMiss {
  found: string;
  edits: number;
}

/**
 * A near miss of the brand: as many words in a row as the brand has, each within the edits its
 * length allows and 1 to MAX_EDITS in all ("acme bnak"), or another number of words that
 * written together are within the edits the glued form allows ("acmebnak" for "Acme Bank",
 * "acme bnak" for "AcmeBank"). The fewest edits win.
 */
export function nearMiss(brand: Brand, words: string[]): NearMiss | null {
  let best: NearMiss | null = null;
  const consider = (found: string, edits: number) => {
    if (edits >= 1 && edits <= MAX_EDITS && (!best || edits < best.edits)) best = { found, edits };
  };
  const n = brand.words.length;
  for (let i = 0; i + n <= words.length; i++) {
    let total = 0;
    for (let j = 0; j < n && total <= MAX_EDITS; j++) {
      const wanted = brand.words[j]!;
      const allowed = editsAllowed(wanted);
      const edits = editDistance(words[i + j]!, wanted, allowed);
      total += edits > allowed ? MAX_EDITS + 1 : edits;
    }
    if (total <= MAX_EDITS) consider(words.slice(i, i + n).join(' '), total);
  }
  const gluedAllowed = editsAllowed(brand.glued);
  const longest = brand.glued.length + gluedAllowed;
  for (let i = 0; i < words.length; i++) {
    let joined = '';
    for (let j = i; j < words.length && joined.length + words[j]!.length <= longest; j++) {
      joined += words[j];
      // As many words as the brand's are judged word by word above ("acme book" is no "acme bank").
      if (j - i + 1 === n) continue;
      const edits = editDistance(joined, brand.glued, gluedAllowed);
      if (edits <= gluedAllowed) consider(words.slice(i, j + 1).join(' '), edits);
    }
  }
  return best;
}

/** Where a listing uses the brand. */
export type MatchedOn = 'name' | 'app_id' | 'developer' | 'description';

export interface BrandUse {
  matchedOn: MatchedOn;
  lookalike: boolean;
  reason: string;
}

/** The fields of a listing the matcher reads. */
export interface ListingText {
  name: string;
  appId: string;
  developer: string | null;
  /** The description's (and summary's) words, as normalText gives them. */
  descriptionWords: string;
}

const LABEL: Record<MatchedOn, string> = {
  name: 'name',
  app_id: 'app id',
  developer: 'developer',
  description: 'description',
};

/**
 * How the listing uses the brand, or null. Exact uses come first (name, app id, developer),
 * then near misses in the same fields, then a mention in the description, which is only ever
 * exact: descriptions are long and full of near misses of any short word.
 */
export function brandUse(brand: Brand, listing: ListingText): BrandUse | null {
  const fields: [MatchedOn, string][] = [
    ['name', listing.name],
    ['app_id', listing.appId],
    ['developer', listing.developer ?? ''],
  ];
  const words = fields.map(([field, text]) => [field, text, wordsOf(text)] as const);
  for (const [field, text, fieldWords] of words) {
    if (containsBrand(brand, fieldWords))
      return { matchedOn: field, lookalike: false, reason: `${LABEL[field]} "${text}" contains "${brand.text}"` };
  }
  for (const [field, text, fieldWords] of words) {
    const miss = nearMiss(brand, fieldWords);
    if (miss) {
      const edits = miss.edits === 1 ? '1 edit' : `${miss.edits} edits`;
      return {
        matchedOn: field,
        lookalike: true,
        reason: `${LABEL[field]} "${text}" looks like "${brand.text}" ("${miss.found}", ${edits} away)`,
      };
    }
  }
  if (containsBrand(brand, listing.descriptionWords.split(' ')))
    return { matchedOn: 'description', lookalike: false, reason: `description mentions "${brand.text}"` };
  return null;
}

/** Official developer names and ids as compared: their words written together ("acmebankplc"). */
export const developerKey = (nameOrId: string): string => wordsOf(nameOrId).join('');

/** Whether any of the listing's developer names or ids is one of the official ones. */
export const isOfficial = (officials: Set<string>, namesAndIds: (string | null)[]): boolean =>
  namesAndIds.some((value) => value !== null && officials.has(developerKey(value)));

/** A text's words written together, as the store keeps names for the prefilter. */
export const compactText = (text: string): string => wordsOf(text).join('');

/**
 * What every listing the brand can match has in its text written together (compactText), for
 * a LIKE prefilter before the word matching above: the glued brand in the description, or in
 * the names one of `pieces`, pieces of the glued brand that its allowed edits cannot all have
 * touched (k edits leave one of k+1 pieces whole). A near miss word by word is within those
 * edits too: words of 4+ letters make the glued form long enough to allow their edits.
 */
export function prefilterOf(brand: Brand): { glued: string; pieces: string[] } {
  const { glued } = brand;
  const parts = editsAllowed(glued) + 1;
  const size = Math.ceil(glued.length / parts);
  const pieces = Array.from({ length: parts }, (_, i) => glued.slice(i * size, (i + 1) * size)).filter(
    (piece) => piece !== '',
  );
  return { glued, pieces };
}
