import { domainToASCII, domainToUnicode } from 'node:url';
import { parse } from 'tldts';

/** A host name as the phishing source keeps it: ASCII (punycode), lower case, with its registrable domain. */
export interface DomainName {
  /** The whole name, e.g. `login.xn--acme-bnk-4ya.com`. */
  domain: string;
  /** Its registrable domain under an ICANN suffix, e.g. `xn--acme-bnk-4ya.com`. */
  registrable: string;
  /** The registrable domain's label without the suffix, e.g. `xn--acme-bnk-4ya`. */
  label: string;
  /** The ICANN public suffix, e.g. `com` or `co.uk`. */
  suffix: string;
  /** The labels before the registrable domain, e.g. `login` (empty when none). */
  subdomain: string;
}

// RFC 1035 letters-digits-hyphen labels; punycode labels (`xn--`) are LDH too.
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const MAX_NAME = 253;

/**
 * A raw name (any case, Unicode or punycode, a trailing dot, a certificate's `*.` wildcard) as a
 * DomainName, or the reason it is none: an IP address, a bad label, no registrable domain under
 * an ICANN suffix (private suffixes such as blogspot.com are ignored on purpose: a lookalike
 * registered there is still a lookalike of the brand).
 */
export function parseDomainName(raw: string): DomainName | string {
  let name = raw.trim().toLowerCase();
  if (name.endsWith('.')) name = name.slice(0, -1);
  if (name.startsWith('*.')) name = name.slice(2);
  if (name === '') return 'empty name';
  const ascii = domainToASCII(name);
  if (ascii === '') return 'not a valid domain name';
  if (ascii.length > MAX_NAME) return `longer than ${MAX_NAME} characters`;
  if (!ascii.split('.').every((label) => LABEL.test(label))) return 'not a valid domain name';
  const parsed = parse(ascii);
  if (parsed.isIp) return 'an IP address, not a domain';
  if (!parsed.domain || !parsed.publicSuffix || !parsed.domainWithoutSuffix || !parsed.isIcann)
    return 'no registrable domain under a known public suffix';
  return {
    domain: ascii,
    registrable: parsed.domain,
    label: parsed.domainWithoutSuffix,
    suffix: parsed.publicSuffix,
    subdomain: parsed.subdomain ?? '',
  };
}

/** The Unicode form of a punycode name (what a person sees in the address bar), or null when it is plain ASCII. */
export function unicodeOf(domain: string): string | null {
  if (!domain.includes('xn--')) return null;
  const unicode = domainToUnicode(domain);
  return unicode && unicode !== domain ? unicode : null;
}
