import { parse as parseHost } from 'tldts';

/**
 * One credential as the parsers read it, before normalisation: where it was used (a URL, a
 * host, or nothing for a plain combolist line), the login and the password, and what a stealer
 * log says about the infected machine.
 */
export interface CredentialRecord {
  url: string | null;
  login: string;
  password: string;
  software?: string | null;
  machine?: MachineInfo | null;
}

export interface MachineInfo {
  country: string | null;
  os: string | null;
  /** Epoch ms of the infection (the log date), when the log says. */
  infectedAt: number | null;
  /** The machine's hardware id, as its system file gives it. */
  hwid?: string | null;
  /** The machine's folder in the log, named by the stealer or seller (family, country, HWID, date…). */
  folder?: string | null;
}

/** A credential's searchable parts (docs/ingest.md "How credentials are normalised"). */
export interface NormalizedCredential {
  login: string;
  /** The login when it is an email address, lower-cased. */
  email: string | null;
  /** The host part of an email login, and its registrable domain (public suffix list). */
  loginHost: string | null;
  loginDomain: string | null;
  url: string | null;
  host: string | null;
  /** The registrable domain of the URL's host ("vpn.acme-bank.co.uk" → "acme-bank.co.uk"). */
  domain: string | null;
  /** The Android package of an `android://<hash>@<package>/` URL (an app's saved login): no host, no domain. */
  appId: string | null;
  /** A login page, admin panel, or other kind of URL, from its path and port. */
  urlKind: 'admin' | 'login' | 'other' | null;
}

const EMAIL = /^[^\s@]+@([^\s@]+\.[^\s@]+)$/;
// Chrome's saved logins of Android apps: `android://<base64 signing-key hash>@com.example.app/`
// (the hash may hold `/`, `+`, `=`; the package is after the last `@`).
const ANDROID_URL = /^android:\/\//i;
const ANDROID_PACKAGE = /^android:\/\/(?:.*@)?([A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)+)\/?$/i;

// Paths and ports of administration panels: CMS back ends, hosting and database consoles.
const ADMIN_MARKERS =
  /\/(wp-admin|wp-login\.php|administrator|admin|adm|backoffice|back-office|cpanel|whm|plesk|phpmyadmin|pma|manager|controlpanel|admincp|moderator|webadmin|siteadmin)\b|:(2082|2083|2086|2087|2222|8083|10000)\b/i;
const LOGIN_MARKERS = /\/(login|log-in|signin|sign-in|sso|auth|account|oauth|session|logon|idp|adfs|owa)\b/i;

/** Host and registrable domain of a URL or bare host, or nulls when it names none. */
export function hostOf(value: string): { host: string | null; domain: string | null } {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
  let host: string;
  try {
    host = new URL(withScheme).hostname.toLowerCase();
  } catch {
    return { host: null, domain: null };
  }
  if (!host) return { host: null, domain: null };
  const parsed = parseHost(host);
  if (parsed.isIp) return { host, domain: host };
  return { host, domain: parsed.domain ?? null };
}

export function normalizeCredential(record: CredentialRecord): NormalizedCredential {
  const login = record.login.trim();
  const emailMatch = EMAIL.exec(login);
  const email = emailMatch ? login.toLowerCase() : null;
  const loginParts = emailMatch ? hostOf(emailMatch[1]!) : { host: null, domain: null };
  const url = record.url?.trim() || null;
  const android = url !== null && ANDROID_URL.test(url);
  // An app's package (com.acme.app) reads like a host name, and its "domain" would be wrong.
  const { host, domain } = url && !android ? hostOf(url) : { host: null, domain: null };
  const appId = android ? (ANDROID_PACKAGE.exec(url)?.[1] ?? null) : null;
  const urlKind = url === null ? null : ADMIN_MARKERS.test(url) ? 'admin' : LOGIN_MARKERS.test(url) ? 'login' : 'other';
  return {
    login,
    email,
    loginHost: loginParts.host,
    loginDomain: loginParts.domain,
    url,
    host,
    domain,
    appId,
    urlKind,
  };
}

/**
 * The hash scheme of a "password" that is really a hash (dumps of user tables often hold
 * those), or null for a plain password. Hex lengths name the usual unsalted digests.
 */
export function hashTypeOf(password: string): string | null {
  if (/^\$2[abxy]?\$\d{2}\$[./A-Za-z0-9]{53}$/.test(password)) return 'bcrypt';
  if (/^\$argon2(id|i|d)\$/.test(password)) return 'argon2';
  if (/^\$6\$[^$]+\$[./A-Za-z0-9]{86}$/.test(password)) return 'sha512crypt';
  if (/^\$1\$[^$]+\$[./A-Za-z0-9]{22}$/.test(password)) return 'md5crypt';
  if (!/^[a-f0-9]+$/i.test(password)) return null;
  return { 32: 'md5', 40: 'sha1', 64: 'sha256', 128: 'sha512' }[password.length] ?? null;
}

/** A password as notifications show it: never its length, at most its first and last character. */
export function maskPassword(password: string): string {
  const chars = [...password];
  return chars.length >= 6 ? `${chars[0]}****${chars[chars.length - 1]}` : '****';
}
