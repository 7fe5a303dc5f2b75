import { describe, expect, it } from 'vitest';
import { parseQuery } from '../../../../src/modules/sources/common/query/query-language.ts';
import { highlight, highlightTerms } from './highlight.ts';

const marked = (text: string, query: string) =>
  highlight(text, highlightTerms(parseQuery(query).tree))
    .map((segment) => (segment.match ? `[${segment.text}]` : segment.text))
    .join('');

describe('highlighting the terms of a query in a result', () => {
  it('marks every occurrence of each term, whatever its case, keeping the original text', () => {
    expect(marked('Fresh LOGS for acme-bank.com, more fresh logs', '"fresh logs" AND acme-bank.com')).toBe(
      '[Fresh LOGS] for [acme-bank.com], more [fresh logs]',
    );
  });

  it('leaves terms under a NOT unmarked', () => {
    expect(marked('acme and test and demo', 'acme -test NOT (demo)')).toBe('[acme] and test and demo');
  });

  it('merges overlapping and nested matches into one mark', () => {
    expect(marked('login.acme.com', 'acme.com OR login.acme')).toBe('[login.acme.com]');
    expect(marked('xxabcabcxx', 'abcabc OR bca')).toBe('xx[abcabc]xx');
  });

  it('folds as the server does: Cyrillic, Greek final sigma, characters whose lower case is longer', () => {
    expect(marked('Продам БАЗУ клиентов', 'базу')).toBe('Продам [БАЗУ] клиентов');
    expect(marked('ΟΔΟΣ ΟΔΟΣΗΜΑΝΣΗ', 'οδοσ')).toBe('[ΟΔΟΣ] [ΟΔΟΣ]ΗΜΑΝΣΗ');
    // İ lower-cases to two code units (i + combining dot): the mark still cuts whole characters.
    expect(marked('İSTANBUL leak', 'i̇stanbul')).toBe('[İSTANBUL] leak');
    expect(marked('x İ y', 'i')).toBe('x [İ] y');
  });

  it('keeps astral characters whole', () => {
    expect(marked('🔥 fresh 🔥 logs', 'fresh')).toBe('🔥 [fresh] 🔥 logs');
  });

  it('returns the text unmarked when nothing matches', () => {
    expect(highlight('nothing here', ['absent'])).toEqual([{ text: 'nothing here', match: false }]);
    expect(highlight('', ['a'])).toEqual([]);
  });
});
