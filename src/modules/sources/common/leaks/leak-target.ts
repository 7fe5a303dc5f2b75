import { hostOf } from './credential.ts';

/**
 * What a rule's domain or URL names: the registrable domain whose credentials to read, plus,
 * when the user gave more, the host (a subdomain) and the path prefix that narrow it.
 */
export interface LeakTarget {
  domain: string;
  /** Set when a subdomain (or IP) was named: only that host and hosts under it. */
  host: string | null;
  /** Set when a path was named: only URLs whose path starts with it. */
  path: string | null;
}

export function parseLeakTarget(value: string): LeakTarget | null {
  const text = value.trim();
  if (!text || /\s/.test(text)) return null;
  const { host, domain } = hostOf(text);
  if (!host || !domain) return null;
  let pathPrefix: string | null = null;
  try {
    const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`);
    if (url.pathname && url.pathname !== '/') pathPrefix = url.pathname.toLowerCase();
  } catch {
    return null;
  }
  return { domain, host: host === domain ? null : host, path: pathPrefix };
}
