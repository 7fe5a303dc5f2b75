import type { StixDescription, StixObservable } from '../../kit/source.ts';

/** The helpers every source's STIX description uses (docs/stix.md): observables, patterns, text. */

export const str = (value: unknown): string | null =>
  typeof value === 'string' && value.trim() !== '' ? value.trim() : null;

const num = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

/** Properties with the absent (null, undefined, empty) ones left out. */
export function present(properties: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(properties)) {
    if (value === null || value === undefined || value === '') continue;
    if (Array.isArray(value) && value.length === 0) continue;
    out[key] = value;
  }
  return out;
}

const HOSTNAME = /^(?=.{1,253}$)([a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/i;

/** A domain-name observable, or null for what is not one (a wildcard loses its `*.`). */
export function domainName(value: unknown): StixObservable | null {
  const name = str(value)?.replace(/^\*\./, '').replace(/\.$/, '').toLowerCase();
  return name && HOSTNAME.test(name) ? { type: 'domain-name', properties: { value: name } } : null;
}

/** A url observable for an absolute URL, or null. */
export function url(value: unknown): StixObservable | null {
  const text = str(value);
  if (!text) return null;
  return URL.canParse(text) && /^[a-z][a-z0-9+.-]*:\/\//i.test(text)
    ? { type: 'url', properties: { value: text } }
    : null;
}

export function emailAddr(value: unknown): StixObservable | null {
  const text = str(value)?.toLowerCase();
  return text && /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(text) ? { type: 'email-addr', properties: { value: text } } : null;
}

export function ipAddr(value: unknown): StixObservable | null {
  const text = str(value);
  if (!text) return null;
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(text)) return { type: 'ipv4-addr', properties: { value: text } };
  if (text.includes(':') && /^[0-9a-f:.]+$/i.test(text)) return { type: 'ipv6-addr', properties: { value: text } };
  return null;
}

/** A user-account observable (an author, a leaked login); the properties absent are left out. */
export function userAccount(properties: Record<string, unknown>): StixObservable | null {
  const kept = present(properties);
  return kept.user_id !== undefined || kept.account_login !== undefined
    ? { type: 'user-account', properties: kept }
    : null;
}

/** Observables without the nulls and without repeats (same type and properties). */
export function observables(...items: (StixObservable | null)[]): StixObservable[] {
  const seen = new Set<string>();
  const out: StixObservable[] = [];
  for (const item of items) {
    if (!item) continue;
    const key = `${item.type}|${JSON.stringify(item.properties)}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(item);
  }
  return out;
}

/** A string as a STIX pattern literal: quotes and backslashes escaped (STIX 2.1 section 9.5). */
const patternString = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** `[type:property = 'value']`, or the values ORed in one observation expression. */
export function equalityPattern(type: string, property: string, values: string[]): string {
  return `[${values.map((value) => `${type}:${property} = ${patternString(value)}`).join(' OR ')}]`;
}

// What a leaked secret looks like in free text: `password: x`, `pass=x`, `pwd x`. A paste or a
// message quoting one keeps the word and loses the secret in an export (docs/stix.md).
const SECRET_IN_TEXT = /\b(pass(?:word|wd)?|pwd|passcode|pin)(\s*[:=]\s*|\s+)(\S+)/gi;

/** Free text with what follows a password label replaced (docs/stix.md "Never exported"). */
export const withoutSecrets = (text: string) =>
  text.replace(SECRET_IN_TEXT, (_whole, label: string, separator: string) => `${label}${separator}[redacted]`);

/** `label: value` lines of the facts that are present. */
export function factLines(facts: [label: string, value: unknown][]): string {
  return facts
    .filter(([, value]) => value !== null && value !== undefined && value !== '')
    .map(([label, value]) => `${label}: ${Array.isArray(value) ? value.join(', ') : String(value)}`)
    .join('\n');
}

/**
 * A leaked credential (filtered and distinct leaks): the account and where it logs in, and that
 * a password exists, never the password, masked or not.
 */
export function credentialDescription(data: Record<string, unknown>, leak: string): StixDescription {
  const login = str(data.login) ?? str(data.email) ?? str(data.username);
  const email = emailAddr(data.email);
  const account = userAccount({
    account_login: login,
    display_name: str(data.username) ?? undefined,
    x_dragnet_has_password: data.password !== null && data.password !== undefined,
  });
  const items = observables(account, email, url(data.url), domainName(data.host ?? data.domain));
  const accountIndex = account ? items.indexOf(account) : -1;
  const emailIndex = email ? items.indexOf(email) : -1;
  if (accountIndex >= 0 && emailIndex >= 0) items[emailIndex] = { ...email!, refs: { belongs_to_ref: accountIndex } };
  const hasPassword = account?.properties.x_dragnet_has_password === true;
  return {
    observables: items,
    summary: `Leaked credential for ${login ?? 'an account'}${str(data.domain) ? ` of ${str(data.domain)}` : ''}`,
    text: factLines([
      ['Login', login],
      ['URL', str(data.url)],
      ['Leak', leak],
      ['Password in the leak', hasPassword ? 'yes (not exported)' : 'no'],
      ['Password kind', str(data.password_type)],
      ['Hash type', str(data.hash_type)],
      ['Software', str(data.software)],
      ['Country', str(data.country)],
      ['First seen', str(data.first_seen) ?? str(data.discovered_at)],
      ['Last seen', str(data.last_seen)],
    ]),
  };
}

/**
 * A card (credit cards and BIN-CVV): no STIX observable type fits a card, so the note carries its
 * BIN and masked number only (never a full number or a CVV: has_cvv says whether one exists).
 */
export function cardDescription(data: Record<string, unknown>): StixDescription {
  const bin = str(data.bin);
  const last4 = str(data.last4);
  const masked = bin && last4 ? `${bin}******${last4}` : null;
  return {
    observables: [],
    summary: `Payment card ${masked ?? bin ?? ''} (${[str(data.brand), str(data.issuer)].filter(Boolean).join(', ')})`,
    text: factLines([
      ['BIN', bin],
      ['Masked PAN', masked],
      ['Brand', str(data.brand)],
      ['Type', str(data.card_type)],
      ['Level', str(data.level)],
      ['Issuer', str(data.issuer)],
      ['Country', str(data.country)],
      ['Expires', str(data.expires)],
      ['CVV present', data.has_cvv === true ? 'yes (not exported)' : 'no'],
      ['Source', str(data.source_name)],
      ['Shop', str(data.shop)],
      ['Base', str(data.base)],
      ['Price', num(data.price)],
      ['Discovered', str(data.discovered_at)],
    ]),
  };
}
