import { describe, expect, it } from 'vitest';
import { domainsNamedIn, padded, queryDomainOf, wordsOf } from './post-names.ts';

/** Whether the query's words are a whole-word run of the name, as the matcher's LIKE tests it. */
const nameMatches = (query: string, name: string) => padded(wordsOf(name)).includes(padded(wordsOf(query)));

describe('victim names', () => {
  it('are words of letters and digits, lower case, without accents', () => {
    expect(wordsOf('ACME BANK PLC.')).toEqual(['acme', 'bank', 'plc']);
    expect(wordsOf('acme-bank.com')).toEqual(['acme', 'bank', 'com']);
    expect(wordsOf('Société Générale, S.A.')).toEqual(['societe', 'generale', 's', 'a']);
    expect(wordsOf('Müller & Söhne GmbH')).toEqual(['muller', 'sohne', 'gmbh']);
    expect(wordsOf('株式会社 テスト')).toEqual(['株式会社', 'テスト']);
    expect(wordsOf(' -- ')).toEqual([]);
  });

  it('match a query as a whole-word run, whatever the case and punctuation', () => {
    expect(nameMatches('Acme Bank', 'ACME BANK PLC')).toBe(true);
    expect(nameMatches('Acme Bank', 'acme-bank.com')).toBe(true);
    expect(nameMatches('acme bank', 'The Acme Bank')).toBe(true);
    expect(nameMatches('Acme Bank', 'Acmeville')).toBe(false);
    expect(nameMatches('Acme Bank', 'Acme Banking Group')).toBe(false);
    expect(nameMatches('Acme Bank', 'Bank of Acme')).toBe(false);
    expect(nameMatches('Acme', 'Acmeville Public Library')).toBe(false);
  });
});

describe('domains named in a text', () => {
  it('are the registrable domains of host names, URLs, emails and lists', () => {
    expect(domainsNamedIn('https://www.SHERMAN.EDU')).toEqual(['sherman.edu']);
    expect(domainsNamedIn('www.garageliving.com, www.dispenser.com')).toEqual(['garageliving.com', 'dispenser.com']);
    expect(domainsNamedIn('jockeyclub.org....')).toEqual(['jockeyclub.org']);
    expect(domainsNamedIn('write to it@portal.acme-bank.co.uk or see acme-bank.co.uk/about')).toEqual([
      'acme-bank.co.uk',
    ]);
    expect(domainsNamedIn('www.aapd.com.au')).toEqual(['aapd.com.au']);
    expect(domainsNamedIn('bücher.de')).toEqual(['xn--bcher-kva.de']);
  });

  it('are not abbreviations, versions or names without a known suffix', () => {
    expect(domainsNamedIn('Grupo S.A. e.g. Inc.The 7.6 CorporateEdition v1.2.3 Ohio History Fund')).toEqual([]);
    expect(domainsNamedIn('')).toEqual([]);
  });
});

describe('a query', () => {
  it('is a domain when it is one host name or URL', () => {
    expect(queryDomainOf('acme-bank.com')).toBe('acme-bank.com');
    expect(queryDomainOf(' https://portal.Acme-Bank.com/login ')).toBe('acme-bank.com');
    expect(queryDomainOf('Acme Bank')).toBeNull();
    expect(queryDomainOf('acme-bank.com acme.org')).toBeNull();
    expect(queryDomainOf('Acme')).toBeNull();
  });
});
