import { lookup as systemLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { blockedRange } from './address-policy.ts';
import { normalHost, type AllowList } from './allow-list.ts';

/**
 * The one gate for every connection Dragnet opens on someone's behalf (webhooks, SMTP senders,
 * collectors): it resolves the name once, judges every address the name resolves to
 * (address-policy.ts) and hands back the one to connect to. Callers connect to that address,
 * never to the name, so a name that answers a public address to the check and 127.0.0.1 to the
 * connection (DNS rebinding) reaches nothing; TLS still names the host (SNI, certificate check).
 */
export class BlockedAddressError extends Error {
  readonly code = 'EBLOCKED';
}

/** Names the cloud providers' metadata services answer to, refused before any DNS lookup. */
const METADATA_HOSTS = new Set(['metadata.google.internal', 'metadata', 'instance-data', 'metadata.azure.internal']);

type Lookup = (host: string) => Promise<Array<{ address: string; family: number }>>;

/**
 * `lookup` answers at the resolver's pace (retries against every configured name server can
 * take minutes), and before any connect timeout has started: so the caller's timeout bounds it.
 */
function resolveWithin(lookup: Lookup, host: string, timeoutMs: number | undefined) {
  if (timeoutMs === undefined) return lookup(host);
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(Object.assign(new Error(`${host}: the name did not resolve within ${timeoutMs} ms`), { code: 'EDNS' })),
      timeoutMs,
    );
  });
  return Promise.race([lookup(host), expired]).finally(() => clearTimeout(timer));
}

export function createOutboundGuard(allow: AllowList, options: { lookup?: Lookup } = {}) {
  const lookup = options.lookup ?? ((host: string) => systemLookup(host, { all: true, verbatim: true }));
  return {
    /** The address to connect to for `host`:`port`, or a BlockedAddressError; the name resolved within `timeoutMs`. */
    async resolve(rawHost: string, port: number, timeoutMs?: number): Promise<string> {
      const host = normalHost(rawHost);
      const judge = (address: string) => {
        if (allow.allows({ host, address, port })) return;
        const range = blockedRange(address);
        if (range !== null) {
          const which = address === host ? `address ${host}` : `${host} resolves to ${address}, which`;
          throw new BlockedAddressError(`${which} is not a public address (${range})`);
        }
      };
      if (isIP(host)) {
        judge(host);
        return host;
      }
      if (METADATA_HOSTS.has(host) && !allow.allows({ host, port })) {
        throw new BlockedAddressError(`host ${host} is a cloud metadata name`);
      }
      const addresses = await resolveWithin(lookup, host, timeoutMs);
      // Every answer is judged, not only the one used: a name that also points inside is refused.
      for (const { address } of addresses) judge(address);
      // IPv4 first, as nodemailer and most clients do: an IPv6 route is missing more often.
      const chosen = addresses.find((a) => a.family === 4) ?? addresses[0];
      if (!chosen) throw new BlockedAddressError(`${host} has no address`);
      return chosen.address;
    },
  };
}

export type OutboundGuard = ReturnType<typeof createOutboundGuard>;
