import { domainToUnicode } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  DICTIONARY_WORDS,
  FUZZERS,
  generatePermutations,
  neighboursOf,
  skeletonOf,
  SWAP_SUFFIXES,
  type Fuzzer,
} from './permutations.ts';
import { dnstwistScans } from '../../../../test/support/dnstwist-scans.ts';

const namesOf = (permutations: Map<string, Fuzzer>, fuzzer: Fuzzer) =>
  [...permutations].filter(([, f]) => f === fuzzer).map(([name]) => name);

describe('phishing permutations (dnstwist fuzzers)', () => {
  const youtube = generatePermutations({ label: 'youtube', suffix: 'com' });

  // What each scan holds, and the pairs of it our generator does not make: two IDN homoglyphs of
  // our hand-written scans use letters of dnstwist's pre-2020 glyph table (Cyrillic е, Armenian օ),
  // which the generator does not follow; the lookalike index still finds them by their skeleton.
  const expected: Record<string, { pairs: number; fuzzers: string[]; notMade: string[] }> = {
    'test/fixtures/phishing/globex-pay.com.dnstwist.json': {
      pairs: 5,
      fuzzers: ['addition', 'homoglyph', 'omission', 'tld-swap', 'transposition'],
      notMade: ['homoglyph xn--globx-pay-j0h.com'],
    },
    'test/fixtures/phishing/globex-pay.com.dnstwist-2019.json': {
      pairs: 4,
      fuzzers: ['bitsquatting', 'homoglyph', 'omission', 'transposition'],
      notMade: ['homoglyph xn--glbex-pay-hrk.com'],
    },
    // All of addition, bitsquatting, homoglyph (ASCII and IDN), hyphenation, insertion, omission,
    // repetition, replacement, subdomain, transposition, vowel-swap and various.
    '../shared/fixtures/dnstwist/youtube.com': {
      pairs: 235,
      fuzzers: FUZZERS.filter((f) => f !== 'dictionary' && f !== 'tld-swap'),
      notMade: [],
    },
  };
  it.each(dnstwistScans())('makes every fuzzer/domain pair of the dnstwist scan $name', ({ name, watched, pairs }) => {
    const ours = generatePermutations(watched);
    const missing = pairs.filter((pair) => {
      const [fuzzer, domain] = pair.split(' ');
      return ours.get(domain!) !== fuzzer;
    });
    expect(pairs).toHaveLength(expected[name]!.pairs);
    expect([...new Set(pairs.map((pair) => pair.split(' ')[0]))].sort()).toEqual([...expected[name]!.fuzzers].sort());
    expect(missing).toEqual(expected[name]!.notMade);
  });

  it('never yields the watched name, an invalid label, or a name twice', () => {
    expect(youtube.has('youtube.com')).toBe(false);
    for (const name of youtube.keys()) {
      expect(name).toMatch(/^([a-z0-9]([a-z0-9-]*[a-z0-9])?\.)+[a-z0-9-]+$/);
      expect(name.length).toBeLessThanOrEqual(253);
    }
    // A hyphen next to a label's end is no name: `-acme.com`, `acme-.com` and `acme.-bank.com`.
    const acme = generatePermutations({ label: 'acme-bank', suffix: 'com' });
    expect([...acme.keys()].filter((name) => /(^|\.)-|-\./.test(name))).toEqual([]);
  });

  it("derives the keyboard neighbours of dnstwist's QWERTY, QWERTZ and AZERTY tables", () => {
    const sorted = (chars: string) => [...chars].sort();
    // QWERTY q 12wa, QWERTZ q 12wa, AZERTY q zswa.
    expect(neighboursOf('q').sort()).toEqual(sorted('12wazs'));
    // QWERTY y 7uhgt6, QWERTZ y asx, AZERTY y 7uhgt6.
    expect(neighboursOf('y').sort()).toEqual(sorted('7uhgt6asx'));
    // QWERTY m njk, QWERTZ m njk, AZERTY m lp.
    expect(neighboursOf('m').sort()).toEqual(sorted('njklp'));
    // QWERTY p lo0, AZERTY p lo0m.
    expect(neighboursOf('p').sort()).toEqual(sorted('lo0m'));
    expect(neighboursOf('-')).toEqual([]);
  });

  it('makes each fuzzer the way dnstwist does', () => {
    const acme = generatePermutations({ label: 'acme', suffix: 'com' });
    expect(namesOf(acme, 'omission').sort()).toEqual(['acm.com', 'ace.com', 'ame.com', 'cme.com'].sort());
    expect(namesOf(acme, 'transposition').sort()).toEqual(['amce.com', 'acem.com', 'came.com'].sort());
    expect(namesOf(acme, 'hyphenation').sort()).toEqual(['a-cme.com', 'ac-me.com', 'acm-e.com'].sort());
    expect(namesOf(acme, 'subdomain').sort()).toEqual(['a.cme.com', 'ac.me.com'].sort());
    // acmee.com is a repetition too, but addition makes it first and names it.
    expect(namesOf(acme, 'repetition').sort()).toEqual(['aacme.com', 'accme.com', 'acmme.com'].sort());
    expect(acme.get('acmee.com')).toBe('addition');
    expect(namesOf(acme, 'vowel-swap')).toEqual(expect.arrayContaining(['ocme.com', 'acmo.com']));
    expect(acme.get('acme-login.com')).toBe('dictionary');
    expect(acme.get('secureacme.com')).toBe('dictionary');
    expect(acme.get('acme.net')).toBe('tld-swap');
    expect(acme.get('acmecom.com')).toBe('various');
    expect(namesOf(acme, 'tld-swap')).toHaveLength(SWAP_SUFFIXES.length - 1);
    // bitsquatting: one flipped bit of one character, kept when it is a name character.
    expect(acme.get('qcme.com')).toBe('bitsquatting'); // a (0x61) ^ 0x10 = q
    expect(acme.get('aame.com')).toBe('bitsquatting'); // c (0x63) ^ 0x02 = a
  });

  it('puts a hyphenated brand together with words in place of its parts', () => {
    const acme = generatePermutations({ label: 'acme-bank', suffix: 'com' });
    expect(acme.get('acme-login.com')).toBe('dictionary');
    expect(acme.get('secure-bank.com')).toBe('dictionary');
    expect(acme.get('acme-bank-verify.com')).toBe('dictionary');
    expect(namesOf(acme, 'dictionary').length).toBeGreaterThanOrEqual(DICTIONARY_WORDS.length * 4);
  });

  it('writes IDN homoglyphs in punycode, replacing a run of one letter (dnstwist windows)', () => {
    const unicode = namesOf(youtube, 'homoglyph').map((name) => domainToUnicode(name));
    expect(unicode).toEqual(
      expect.arrayContaining([
        'yоutube.com'.replace('о', 'ȯ'),
        'yoůtůbe.com',
        'yoůtube.com',
        'youtůbe.com',
        'youtulbe.com',
        'y0utube.com',
      ]),
    );
    // Both u's at once only through a run that holds them both, never the whole label.
    expect(generatePermutations({ label: 'aba', suffix: 'com' }).has(new URL('http://àbà.com').hostname)).toBe(false);
  });

  it('various: a two-level suffix cut short or run into the label; -cc.com for a country-code brand', () => {
    const jp = generatePermutations({ label: 'acme', suffix: 'co.jp' });
    expect(jp.get('acme.jp')).toBe('various');
    expect(jp.get('acmeco.jp')).toBe('various');
    // A name two fuzzers make is named by the first: acme.uk is also a tld-swap of acme.co.uk.
    expect(generatePermutations({ label: 'acme', suffix: 'co.uk' }).get('acme.uk')).toBe('tld-swap');
    expect(generatePermutations({ label: 'acme', suffix: 'de' }).get('acme-de.com')).toBe('various');
  });

  it('reads an IDN label back as the Latin letters it imitates', () => {
    expect(skeletonOf('yoůtůbe')).toBe('youtube');
    expect(skeletonOf('ɑcme-bɑnk')).toBe('acme-bank');
    expect(skeletonOf('аррӏе')).toBe('apple'); // Cyrillic
    expect(skeletonOf('münchen')).toBe('munchen');
    expect(skeletonOf('東京')).toBe('東京');
  });
});
