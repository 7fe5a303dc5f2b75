import { domainToASCII } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseDomainName } from '../common/domains/domain-name.ts';
import {
  createLookalikeIndex,
  editDistance,
  lookalikeScore,
  measureLookalike,
  type Lookalike,
} from './lookalike-index.ts';
import { generatePermutations } from './permutations.ts';
import { dnstwistScans } from '../../../../test/support/dnstwist-scans.ts';

/** An observed name as the store keeps it. */
const observed = (raw: string) => {
  const name = parseDomainName(raw);
  if (typeof name === 'string') throw new Error(name);
  return { domain: name.domain, registrable: name.registrable };
};

describe('phishing lookalike index', () => {
  const index = createLookalikeIndex(['acme-bank.com', 'globex.io', 'ing.com', 'youtube.com']);
  const watchedOf = (found: Lookalike[]) =>
    found.map((l) => `${index.watched(l.watched).name.domain} ${l.fuzzer}${l.brandInSubdomain ? ' +sub' : ''}`);
  const of = (raw: string) => watchedOf(index.lookalikesOf(observed(raw)));

  it('finds permutations by lookup, a host under a permutation included', () => {
    expect(of('acme-bnak.com')).toEqual(['acme-bank.com transposition']);
    expect(of('acmebank.com')).toEqual(['acme-bank.com omission']);
    expect(of('login.acme-bnak.com')).toEqual(['acme-bank.com transposition']);
    expect(of('gl0bex.io')).toEqual(['globex.io homoglyph']);
    expect(of('ing.net')).toEqual(['ing.com tld-swap']);
    expect(of('lng.com')).toEqual(['ing.com homoglyph']);
  });

  it('finds the brand joined to words, in a subdomain, or under another suffix', () => {
    expect(of('acmebank-secure.com')).toEqual(['acme-bank.com combosquatting']);
    expect(of('my-acme-bank-online.net')).toEqual(['acme-bank.com combosquatting']);
    expect(of('acme-bank.com.login-verify.net')).toEqual(['acme-bank.com levelsquatting +sub']);
    expect(of('globex.secure-login.xyz')).toEqual(['globex.io levelsquatting +sub']);
    expect(of('acme-bank.shop')).toEqual(['acme-bank.com tld-swap']);
    expect(of('acme-bank.acme-bnak.com')).toEqual(['acme-bank.com transposition +sub']);
    // A short brand is only matched by its permutations: `ing` is part of too many names.
    expect(of('ing-shop.com')).toEqual([]);
    expect(of('bank.com')).toEqual([]);
    expect(of('acme.com')).toEqual([]);
  });

  it('reads IDN names back to the letters they imitate, however many glyphs', () => {
    expect(of('аcme-bаnk.com')).toEqual(['acme-bank.com homoglyph']); // two Cyrillic а
    expect(of('ɑcmé-bɑnk.com')).toEqual(['acme-bank.com homoglyph']);
    expect(of('acme-bank.co')).toEqual(['acme-bank.com tld-swap']);
  });

  it('never reports the watched domain or its own hosts', () => {
    expect(of('acme-bank.com')).toEqual([]);
    expect(of('www.acme-bank.com')).toEqual([]);
    expect(of('acme-bank.com.acme-bank.com')).toEqual([]);
    expect(of('example.org')).toEqual([]);
  });

  it('reports each watched domain a name imitates, for as many as watch it', () => {
    const two = createLookalikeIndex(['acme-bank.com', 'acme-bank.com', 'acme-banks.com']);
    const found = two.lookalikesOf(observed('acme-bnak.com'));
    expect(found.map((l) => l.watched).sort()).toEqual([0, 1]);
    expect(two.lookalikesOf(observed('acme-bank.com')).map((l) => [l.watched, l.fuzzer])).toEqual([[2, 'omission']]);
  });

  it('finds every permutation the generator makes, under its fuzzer, though it holds only half of them', () => {
    for (const domain of ['acme-bank.com', 'youtube.com', 'pay-pal.co.uk', 'münchen.de', 'ing.com', 'acme.shop']) {
      const name = parseDomainName(domain);
      if (typeof name === 'string') throw new Error(name);
      const single = createLookalikeIndex([domain]);
      const permutations = generatePermutations({ label: single.watched(0).label, suffix: name.suffix });
      const wrong = [...permutations].filter(
        ([candidate, fuzzer]) =>
          single.lookalikesOf(observed(candidate)).find((l) => l.watched === 0)?.fuzzer !== fuzzer,
      );
      expect(wrong, domain).toEqual([]);
      if (domain === 'acme-bank.com') expect(single.candidates).toBeLessThan(permutations.size / 2);
    }
  });

  it.each(dnstwistScans())('finds every permutation of the dnstwist scan $name', ({ watched, pairs }) => {
    const index = createLookalikeIndex([`${watched.label}.${watched.suffix}`]);
    const missed = pairs.filter((pair) => index.lookalikesOf(observed(pair.split(' ')[1]!)).length === 0);
    expect(missed).toEqual([]);
  });

  it('measures Damerau-Levenshtein distance (a swap is one edit) over code points', () => {
    expect(editDistance('acme-bank', 'acme-bnak')).toBe(1);
    expect(editDistance('acme-bank', 'acmebank')).toBe(1);
    expect(editDistance('youtube', 'yoůtůbe')).toBe(2);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('ca', 'abc')).toBe(3); // optimal string alignment: no edit of a swapped pair
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });

  it('scores close, convincing lookalikes higher, 0-100', () => {
    const homoglyph = lookalikeScore({
      fuzzer: 'homoglyph',
      distance: 1,
      longer: 9,
      brandInSubdomain: false,
      hasMx: true,
    });
    const bits = lookalikeScore({
      fuzzer: 'bitsquatting',
      distance: 1,
      longer: 9,
      brandInSubdomain: false,
      hasMx: false,
    });
    const near = lookalikeScore({
      fuzzer: 'replacement',
      distance: 1,
      longer: 9,
      brandInSubdomain: false,
      hasMx: false,
    });
    const far = lookalikeScore({
      fuzzer: 'replacement',
      distance: 4,
      longer: 9,
      brandInSubdomain: false,
      hasMx: false,
    });
    expect(homoglyph).toBe(Math.round(70 + (8 / 9) * 20 + 5));
    expect(homoglyph).toBeGreaterThan(bits);
    expect(near).toBeGreaterThan(far);
    expect(lookalikeScore({ fuzzer: 'homoglyph', distance: 0, longer: 9, brandInSubdomain: true, hasMx: true })).toBe(
      100,
    );
    const [acme] = index.lookalikesOf(observed('acme-bnak.com'));
    expect(measureLookalike(index, acme!, { ...observed('acme-bnak.com'), hasMx: false })).toEqual({
      distance: 1,
      score: Math.round(90 * 0.7 + (8 / 9) * 20),
    });
  });

  it('is built from names as rules hold them (Unicode or punycode)', () => {
    const idn = createLookalikeIndex(['münchen.de']);
    expect(idn.lookalikesOf(observed(domainToASCII('münchen.de').replace('.de', '.com'))).map((l) => l.fuzzer)).toEqual(
      ['tld-swap'],
    );
    expect(idn.lookalikesOf(observed('munchen.de')).map((l) => l.fuzzer)).toEqual(['homoglyph']);
    expect(() => createLookalikeIndex(['not a domain'])).toThrow(/not a valid domain/);
  });
});
