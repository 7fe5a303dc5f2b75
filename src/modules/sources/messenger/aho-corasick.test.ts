import { describe, expect, it } from 'vitest';
import { seededRandom } from '../common/seeded-random.ts';
import { AhoCorasick } from './aho-corasick.ts';

const naive = (patterns: string[], text: string) =>
  new Set(patterns.flatMap((p, i) => (p && text.includes(p) ? [i] : [])));

describe('AhoCorasick', () => {
  it('finds overlapping and nested patterns', () => {
    const patterns = ['he', 'she', 'his', 'hers', 'acme.com', 'login.acme.com'];
    const automaton = new AhoCorasick(patterns);
    expect([...automaton.search('ushers')].sort()).toEqual([0, 1, 3]);
    expect([...automaton.search('user@login.acme.com')].sort()).toEqual([4, 5]);
    expect(automaton.search('nothing to see').size).toBe(0);
  });

  it('handles Cyrillic and repeated patterns', () => {
    const automaton = new AhoCorasick(['логи', 'свежие логи', 'логи']);
    expect([...automaton.search('продаю свежие логи')].sort()).toEqual([0, 1, 2]);
  });

  it('agrees with a naive scan on random texts', () => {
    const random = seededRandom(7);
    const alphabet = 'abcab.-я';
    const word = (n: number) =>
      Array.from({ length: n }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
    const patterns = Array.from({ length: 300 }, () => word(1 + Math.floor(random() * 5)));
    const automaton = new AhoCorasick(patterns);
    for (let i = 0; i < 200; i++) {
      const text = word(40);
      expect(automaton.search(text)).toEqual(naive(patterns, text));
    }
  });
});
