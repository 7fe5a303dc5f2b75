import { parse as parseHost } from 'tldts';
import { withoutNul } from '../../ingest/ingest-kit.ts';
import type { CredentialRecord } from '../credential.ts';

/**
 * One line of a combolist (docs/ingest.md "Combolists"):
 *   email:password, login:password (also `;` as separator)
 *   url:login:password, where the URL itself may hold colons (scheme, port): split from the right
 *   host/path:login:password (a URL without its scheme)
 *   url|login|password (also with spaces around the bars)
 * Returns the record, or the reason the line is not a credential.
 */
const MAX_LINE = 2048;
const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

function looksLikeHost(value: string): boolean {
  if (value.includes('@') || /\s/.test(value)) return false;
  const host = value.split(/[/?#]/, 1)[0]!;
  const parsed = parseHost(host);
  return Boolean(parsed.isIp || (parsed.domain && parsed.isIcann));
}

function credential(url: string | null, login: string, password: string): CredentialRecord | string {
  const trimmedLogin = login.trim();
  if (!trimmedLogin) return 'empty login';
  if (/\s/.test(trimmedLogin)) return 'login contains white space';
  if (password === '') return 'empty password';
  return { url: url?.trim() || null, login: trimmedLogin, password };
}

export function parseComboLine(line: string): CredentialRecord | string | null {
  const text = line.trim();
  if (text === '') return null;
  if (text.length > MAX_LINE) return `line longer than ${MAX_LINE} characters`;

  if (text.includes('|')) {
    const parts = text.split('|').map((part) => part.trim());
    if (parts.length >= 3) return credential(parts[0]!, parts[1]!, parts.slice(2).join('|'));
  }
  if (SCHEME.test(text)) {
    const last = text.lastIndexOf(':');
    const beforeLast = text.lastIndexOf(':', last - 1);
    const schemeEnd = text.indexOf('://');
    if (beforeLast <= schemeEnd) return 'a URL line needs url:login:password';
    return credential(text.slice(0, beforeLast), text.slice(beforeLast + 1, last), text.slice(last + 1));
  }
  const separator = /[:;]/.exec(text);
  if (!separator) return 'no login:password separator';
  const first = text.slice(0, separator.index);
  const rest = text.slice(separator.index + 1);
  // host/path:login:password without a scheme; an email or plain login keeps every later colon
  // in the password.
  if (separator[0] === ':' && looksLikeHost(first)) {
    const next = rest.indexOf(':');
    if (next > 0) return credential(first, rest.slice(0, next), rest.slice(next + 1));
  }
  return credential(null, first, rest);
}

/**
 * Whether some of a text's first lines (the start of a file) are credentials. JSON and markup
 * are not combolists, though a line of them may split at a colon.
 */
export function holdsComboLine(head: string): boolean {
  const text = withoutNul(head);
  if (/^\s*[[{<]/.test(text)) return false;
  return text.split(/\r?\n/, 200).some((line) => {
    const parsed = parseComboLine(line);
    return parsed !== null && typeof parsed !== 'string';
  });
}
