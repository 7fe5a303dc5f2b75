import { isIP } from 'node:net';
import type { Agent, buildConnector, fetch, request } from 'undici';
import { normalHost } from './allow-list.ts';
import { BlockedAddressError, type OutboundGuard } from './outbound-guard.ts';

/** Redirects a GET follows, each hop through the guard. */
const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/**
 * Headers that belong to the origin they were sent to (credentials, and validators such as a
 * feed's ETag): not sent on to another origin a redirect points at, as browsers' fetch does.
 */
const ORIGIN_BOUND_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'if-none-match',
  'if-modified-since',
  'if-match',
  'if-unmodified-since',
  'if-range',
]);

const sameOriginOnly = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !ORIGIN_BOUND_HEADERS.has(name.toLowerCase())));

/**
 * HTTP through the outbound guard: every connection the agent opens first asks the guard for
 * the address (the connector below), then connects to that address with the URL's host kept as
 * the TLS server name. Redirects are never followed by undici: `get` follows a few itself, each
 * new location going through the same connector. undici is loaded with the first request: most
 * processes (every `dragnet` command) send none.
 */
export function createOutboundHttp(
  guard: OutboundGuard,
  options: { timeoutMs?: number; tls?: { ca?: string; rejectUnauthorized?: boolean } } = {},
) {
  let loaded: Promise<{ agent: Agent; undici: { fetch: typeof fetch; request: typeof request } }> | undefined;
  const load = () =>
    (loaded ??= import('undici').then((undici) => {
      const direct = undici.buildConnector({
        ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
        ...options.tls,
      });
      const connect: buildConnector.connector = (target, callback) => {
        const host = normalHost(target.hostname);
        const port = Number(target.port) || (target.protocol === 'https:' ? 443 : 80);
        guard.resolve(host, port, options.timeoutMs).then(
          (address) => {
            // Inside a promise handler a throw would be an unhandled rejection, not the request's error.
            try {
              direct(
                { ...target, hostname: address, servername: target.servername || (isIP(host) ? undefined : host) },
                callback,
              );
            } catch (error) {
              callback(error as Error, null);
            }
          },
          (error: Error) => callback(error, null),
        );
      };
      const timeouts =
        options.timeoutMs === undefined ? {} : { headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs };
      return { undici, agent: new undici.Agent({ connect, ...timeouts }) };
    }));

  return {
    /** One request, redirects not followed (a webhook: spec 6.2). */
    async request(
      url: URL,
      init: { method: 'POST'; body: Buffer; headers: Record<string, string>; signal: AbortSignal },
    ) {
      const { undici, agent } = await load();
      return undici.request(url, { ...init, dispatcher: agent });
    },

    /**
     * A GET that follows up to MAX_REDIRECTS redirects to http(s) URLs, each checked before
     * connecting; a hop to another origin goes without the ORIGIN_BOUND_HEADERS.
     */
    async get(url: string, init: { headers?: Record<string, string>; signal: AbortSignal }) {
      const { undici, agent } = await load();
      let current = new URL(url);
      let headers = init.headers ?? {};
      for (let hop = 0; ; hop++) {
        const response = await undici
          .fetch(current, { headers, signal: init.signal, redirect: 'manual', dispatcher: agent })
          .catch((error: unknown) => {
            // fetch says only "fetch failed"; a refusal is the answer the operator needs.
            throw (error as Error).cause instanceof BlockedAddressError ? (error as Error).cause : error;
          });
        const location = response.headers.get('location');
        if (!REDIRECT_STATUSES.has(response.status) || location === null) return response;
        await response.body?.cancel();
        // Not a refusal: nothing was refused, the feed keeps redirecting (a loop, most likely).
        if (hop === MAX_REDIRECTS) throw new Error(`${url}: gave up after ${MAX_REDIRECTS} redirects`);
        const next = new URL(location, current);
        if (next.origin !== current.origin) headers = sameOriginOnly(headers);
        current = next;
        if (current.protocol !== 'http:' && current.protocol !== 'https:')
          throw new BlockedAddressError(`${url}: redirected to a ${current.protocol} URL`);
      }
    },

    async close() {
      if (loaded) await (await loaded).agent.close();
    },
  };
}

export type OutboundHttp = ReturnType<typeof createOutboundHttp>;
export type OutboundResponse = Awaited<ReturnType<OutboundHttp['get']>>;
