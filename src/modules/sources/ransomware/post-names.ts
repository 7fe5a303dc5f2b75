import { parseDomainName } from '../common/domains/domain-name.ts';

/**
 * How a victim name and a rule's query are compared: as runs of whole words, whatever the case,
 * accents and punctuation ("Acme Bank" is in "ACME BANK PLC" and in "acme-bank.com", not in
 * "Acmeville"), and domains by their registrable domain ("www.acme-bank.com" names
 * acme-bank.com).
 */

/** The words of a text: runs of letters and digits, lower case, accents dropped. */
export function wordsOf(text: string): string[] {
  return (
    text
      .toLowerCase()
      .normalize('NFKD')
      .replace(/\p{M}/gu, '')
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

/**
 * Words (or domains) joined by single spaces and padded with one on each side: the stored form
 * of a list, and the form of what is looked for in it, so `" acme bank "` occurs in
 * `" acme bank plc "` exactly when the words are a whole-word run of the name.
 */
export const padded = (items: string[]): string => (items.length ? ` ${items.join(' ')} ` : '');

/**
 * The registrable domains a text names, in order, once each: host names standing alone, in URLs
 * ("https://www.SHERMAN.EDU" → sherman.edu), in email addresses, in comma-separated lists. A
 * token counts when its last label is a known public suffix, so "Inc.The" or "e.g." is none.
 */
export function domainsNamedIn(text: string): string[] {
  const found = new Set<string>();
  // Splitting on what no host name holds keeps this linear on any text (no backtracking regex).
  for (const token of text.split(/[^\p{L}\p{N}.-]+/u)) {
    const name = token.replace(/^[.-]+|[.-]+$/g, '');
    if (!name.includes('.')) continue;
    const parsed = parseDomainName(name);
    if (typeof parsed !== 'string') found.add(parsed.registrable);
  }
  return [...found];
}

/** The registrable domain a query names when it is a host name or URL and nothing else. */
export function queryDomainOf(query: string): string | null {
  const text = query.trim();
  if (/\s/.test(text)) return null;
  const domains = domainsNamedIn(text);
  return domains.length === 1 ? domains[0]! : null;
}
