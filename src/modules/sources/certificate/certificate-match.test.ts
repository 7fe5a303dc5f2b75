import { describe, expect, it } from 'vitest';
import { matchNames, nameTarget, type NameTarget } from './certificate-match.ts';

const target = (domain: string, includeSubdomains = true) => nameTarget(domain, includeSubdomains) as NameTarget;

describe('nameTarget', () => {
  it('knows the registrable domain and the brand forms a lookalike contains', () => {
    expect(target('Acme-Bank.com')).toEqual({
      domain: 'acme-bank.com',
      registrable: 'acme-bank.com',
      brands: ['acme-bank', 'acmebank'],
      includeSubdomains: true,
    });
    expect(target('shop.acme-bank.co.uk', false)).toEqual({
      domain: 'shop.acme-bank.co.uk',
      registrable: 'acme-bank.co.uk',
      brands: ['acme-bank', 'acmebank'],
      includeSubdomains: false,
    });
    expect(target('northwind.com').brands).toEqual(['northwind']);
  });

  it('has no brand forms for a label shorter than 4 characters', () => {
    expect(target('ibm.com').brands).toEqual([]);
  });

  it('says why a value is no domain', () => {
    expect(nameTarget('https://acme-bank.com/login', true)).toBe('not a valid domain name');
    expect(nameTarget('10.0.0.1', true)).toBe('an IP address, not a domain');
    expect(nameTarget('intranet', true)).toBe('no registrable domain under a known public suffix');
  });
});

describe('matchNames', () => {
  const acme = target('acme-bank.com');

  it('classifies exact, subdomain and lookalike names; the strongest is the match type', () => {
    expect(matchNames(['acme-bank.com', 'www.acme-bank.com'], acme)).toEqual({
      matchType: 'exact',
      matchedNames: ['acme-bank.com', 'www.acme-bank.com'],
    });
    expect(matchNames(['*.acme-bank.com'], acme)).toEqual({ matchType: 'exact', matchedNames: ['*.acme-bank.com'] });
    expect(matchNames(['login.acme-bank.com', 'unrelated.net'], acme)).toEqual({
      matchType: 'subdomain',
      matchedNames: ['login.acme-bank.com'],
    });
    expect(matchNames(['acme-bank-login.com'], acme)).toEqual({
      matchType: 'lookalike',
      matchedNames: ['acme-bank-login.com'],
    });
    expect(matchNames(['acme-bank.com.evil.net', 'evil.net'], acme)).toEqual({
      matchType: 'lookalike',
      matchedNames: ['acme-bank.com.evil.net'],
    });
    expect(matchNames(['secure-acmebank.net'], acme)).toEqual({
      matchType: 'lookalike',
      matchedNames: ['secure-acmebank.net'],
    });
    expect(matchNames(['acme-bank.co.uk'], acme)).toEqual({
      matchType: 'lookalike',
      matchedNames: ['acme-bank.co.uk'],
    });
    expect(matchNames(['acme-bank-login.com', 'login.acme-bank.com'], acme)).toEqual({
      matchType: 'subdomain',
      matchedNames: ['acme-bank-login.com', 'login.acme-bank.com'],
    });
  });

  it('does not match names that share only part of the brand; a name containing it is a lookalike', () => {
    expect(matchNames(['acme.com', 'bank.com', 'notacme-bnk.com', 'acme.bank'], acme)).toBeNull();
    expect(matchNames(['acme-banking.io'], acme)).toEqual({
      matchType: 'lookalike',
      matchedNames: ['acme-banking.io'],
    });
    expect(matchNames([], acme)).toBeNull();
  });

  it('without subdomains, a name under the domain is neither a subdomain hit nor a lookalike', () => {
    const exactOnly = target('acme-bank.com', false);
    expect(matchNames(['login.acme-bank.com'], exactOnly)).toBeNull();
    expect(matchNames(['login.acme-bank.com', 'acme-bank.com'], exactOnly)).toEqual({
      matchType: 'exact',
      matchedNames: ['acme-bank.com'],
    });
    expect(matchNames(['login.acme-bank.com', 'acme-bank-login.com'], exactOnly)).toEqual({
      matchType: 'lookalike',
      matchedNames: ['acme-bank-login.com'],
    });
  });

  it("watching a subdomain: its siblings under the same registrable domain are the owner's, not lookalikes", () => {
    const shop = target('shop.acme-bank.com');
    expect(matchNames(['www.acme-bank.com'], shop)).toBeNull();
    expect(matchNames(['cdn.shop.acme-bank.com'], shop)).toEqual({
      matchType: 'subdomain',
      matchedNames: ['cdn.shop.acme-bank.com'],
    });
    expect(matchNames(['shop-acme-bank.com'], shop)).toEqual({
      matchType: 'lookalike',
      matchedNames: ['shop-acme-bank.com'],
    });
  });

  it('a short brand matches only the domain and names under it', () => {
    expect(matchNames(['ibm-login.com', 'www.ibm.com'], target('ibm.com'))).toEqual({
      matchType: 'subdomain',
      matchedNames: ['www.ibm.com'],
    });
  });
});
