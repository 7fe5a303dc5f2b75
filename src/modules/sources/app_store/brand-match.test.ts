import { describe, expect, it } from 'vitest';
import {
  brandOf,
  brandUse,
  compactText,
  containsBrand,
  developerKey,
  editDistance,
  isOfficial,
  nearMiss,
  normalText,
  prefilterOf,
  wordsOf,
  type Brand,
  type ListingText,
} from './brand-match.ts';

const brand = (query: string): Brand => brandOf(query)!;
const listing = (fields: Partial<ListingText>): ListingText => ({
  name: 'Unrelated',
  appId: 'com.example.app',
  developer: 'Someone',
  descriptionWords: '',
  ...fields,
});

describe('wordsOf', () => {
  it('lowercases, folds accents and lookalike letters, and splits on anything else', () => {
    expect(wordsOf('AcmeBank: Wallet-App')).toEqual(['acmebank', 'wallet', 'app']);
    expect(wordsOf('com.acme_bank.wallet')).toEqual(['com', 'acme', 'bank', 'wallet']);
    expect(wordsOf('Àcmé Bänk')).toEqual(['acme', 'bank']);
    // Cyrillic а, с, е among Latin letters.
    expect(wordsOf('\u0410\u0441m\u0435 Bank')).toEqual(['acme', 'bank']);
    expect(wordsOf(' --- ')).toEqual([]);
    expect(normalText('Acme  Bank!')).toBe('acme bank');
  });
});

describe('editDistance', () => {
  it('counts insertions, deletions, substitutions and adjacent transpositions as one edit', () => {
    expect(editDistance('bank', 'bank', 2)).toBe(0);
    expect(editDistance('bnak', 'bank', 2)).toBe(1);
    expect(editDistance('banks', 'bank', 2)).toBe(1);
    expect(editDistance('bak', 'bank', 2)).toBe(1);
    expect(editDistance('bunk', 'bank', 2)).toBe(1);
    expect(editDistance('acmebnka', 'acmebank', 2)).toBe(2);
  });

  it('stops at max + 1', () => {
    expect(editDistance('wallet', 'bank', 1)).toBe(2);
    expect(editDistance('a', 'abcdef', 2)).toBe(3);
    expect(editDistance('zzzzzzzz', 'acmebank', 2)).toBe(3);
  });
});

describe('containsBrand', () => {
  const acme = brand('Acme Bank');
  it('finds the words in a row, or written together as a word or inside one', () => {
    expect(containsBrand(acme, wordsOf('Acme Bank Wallet'))).toBe(true);
    expect(containsBrand(acme, wordsOf('AcmeBank'))).toBe(true);
    expect(containsBrand(acme, wordsOf('com.myacmebankapp.android'))).toBe(true);
    expect(containsBrand(acme, wordsOf('Bank of Acme'))).toBe(false);
    expect(containsBrand(acme, wordsOf('Acme'))).toBe(false);
  });

  it('finds the brand however its words are spaced', () => {
    expect(containsBrand(brand('AcmeBank'), wordsOf('Acme Bank Wallet'))).toBe(true);
    expect(containsBrand(brand('acme-bank'), wordsOf('com.acmebank.app'))).toBe(true);
    expect(containsBrand(brand('AcmeBank'), wordsOf('Acme Banking'))).toBe(false);
  });

  it('finds a one-word brand only as a whole word', () => {
    expect(containsBrand(brand('Chase'), wordsOf('Chase Mobile'))).toBe(true);
    expect(containsBrand(brand('Chase'), wordsOf('In-app purchase helper'))).toBe(false);
  });
});

describe('nearMiss', () => {
  const acme = brand('Acme Bank');
  it('finds the brand a few edits off, word by word or glued', () => {
    expect(nearMiss(acme, wordsOf('Acme Bnak Mobile'))).toEqual({ found: 'acme bnak', edits: 1 });
    expect(nearMiss(acme, wordsOf('Acne Bamk'))).toEqual({ found: 'acne bamk', edits: 2 });
    expect(nearMiss(acme, wordsOf('com.acmebnak.app'))).toEqual({ found: 'acmebnak', edits: 1 });
    expect(nearMiss(brand('AcmeBank'), wordsOf('Acme Bnak'))).toEqual({ found: 'acme bnak', edits: 1 });
  });

  it('does not call the brand itself, far words or short words a near miss', () => {
    expect(nearMiss(acme, wordsOf('Acme Bank'))).toBeNull();
    // Each word may be at most one edit off at this length.
    expect(nearMiss(acme, wordsOf('Acme Bxxk'))).toBeNull();
    expect(nearMiss(acme, wordsOf('Acme Book'))).toBeNull();
    expect(nearMiss(acme, wordsOf('Acne Bamk Bonk Acre'))).toEqual({ found: 'acne bamk', edits: 2 });
    expect(nearMiss(brand('ING Pay'), wordsOf('INK Pay'))).toBeNull();
  });
});

describe('brandUse', () => {
  const acme = brand('Acme Bank');
  it('names the field and why, exact uses before near misses before the description', () => {
    expect(brandUse(acme, listing({ name: 'Acme Bank Wallet' }))).toEqual({
      matchedOn: 'name',
      lookalike: false,
      reason: 'name "Acme Bank Wallet" contains "Acme Bank"',
    });
    expect(brandUse(acme, listing({ appId: 'com.acmebank.wallet' }))).toMatchObject({
      matchedOn: 'app_id',
      lookalike: false,
    });
    expect(brandUse(acme, listing({ developer: 'Acme Bank Apps Team' }))).toMatchObject({
      matchedOn: 'developer',
      lookalike: false,
    });
    expect(brandUse(acme, listing({ name: 'Acme Bnak', appId: 'com.x.acmebank' }))).toMatchObject({
      matchedOn: 'app_id',
      lookalike: false,
    });
    expect(brandUse(acme, listing({ name: 'Acme Bnak Mobile' }))).toEqual({
      matchedOn: 'name',
      lookalike: true,
      reason: 'name "Acme Bnak Mobile" looks like "Acme Bank" ("acme bnak", 1 edit away)',
    });
    expect(brandUse(acme, listing({ descriptionWords: normalText('Works with Acme Bank cards.') }))).toEqual({
      matchedOn: 'description',
      lookalike: false,
      reason: 'description mentions "Acme Bank"',
    });
  });

  it('takes no near miss from the description', () => {
    expect(brandUse(acme, listing({ descriptionWords: normalText('acme bnak') }))).toBeNull();
    expect(brandUse(acme, listing({}))).toBeNull();
  });
});

describe('official developers', () => {
  it('are compared by their letters and digits, any case', () => {
    const officials = new Set(['Acme Bank plc', '5700313618786177705'].map(developerKey));
    expect(isOfficial(officials, ['ACME BANK PLC.', null])).toBe(true);
    expect(isOfficial(officials, ['Acme+Bank+plc'])).toBe(true);
    expect(isOfficial(officials, ['Someone', '5700313618786177705'])).toBe(true);
    expect(isOfficial(officials, ['Acme Bank', null])).toBe(false);
  });
});

describe('prefilterOf', () => {
  it('gives the glued brand and pieces of it of which one survives the allowed edits', () => {
    expect(prefilterOf(brand('Acme Bank'))).toEqual({ glued: 'acmebank', pieces: ['acm', 'eba', 'nk'] });
    expect(prefilterOf(brand('Chase'))).toEqual({ glued: 'chase', pieces: ['cha', 'se'] });
    expect(prefilterOf(brand('ING'))).toEqual({ glued: 'ing', pieces: ['ing'] });
  });

  it('never leaves out a name the matcher finds', () => {
    for (const query of ['Acme Bank', 'AcmeBank', 'Acme Co', 'ING Pay', 'Chase']) {
      const wanted = brand(query);
      const { pieces } = prefilterOf(wanted);
      for (const name of [
        'Acme Bnak',
        'Acne Bamk',
        'acmebnak',
        'AcmeBnka',
        'Ackme Bank',
        'cme ank',
        'Acme Bank',
        'acme-co',
        'Acne Co',
        'Ing Pay',
        'Chace',
        'Chase',
        'Chasse Bank',
      ]) {
        const words = wordsOf(name);
        if (containsBrand(wanted, words) || nearMiss(wanted, words))
          expect(
            pieces.some((piece) => compactText(name).includes(piece)),
            `${query} / ${name}`,
          ).toBe(true);
      }
    }
  });
});
