import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';

/**
 * Outbound webhooks may only reach public unicast addresses: no loopback, private, link-local
 * (169.254.169.254, the cloud metadata service, is link-local), multicast, CGNAT, unique-local
 * or reserved ranges. The check runs on the address actually connected to, inside the
 * connection's DNS lookup, so a name that resolves to a public address when the webhook is
 * saved and to 127.0.0.1 at send time (DNS rebinding) is still refused. Operators may allow
 * named hosts or addresses (DRAGNET_WEBHOOK_ALLOW_HOSTS) for local testing.
 */
export class BlockedAddressError extends Error {}

const METADATA_HOSTS = new Set(['metadata.google.internal', 'metadata', 'instance-data']);

export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  return parsed.range() === 'unicast';
}

export function createSsrfGuard(allowHosts: string[]) {
  const allowed = new Set(allowHosts.map((h) => h.trim().toLowerCase()).filter(Boolean));
  const isAllowed = (hostOrAddress: string) => allowed.has(hostOrAddress.toLowerCase().replace(/^\[|\]$/g, ''));

  /** Refuses a URL whose host is a literal non-public address or a metadata name. */
  function checkUrlHost(url: URL): void {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isAllowed(host)) return;
    if (METADATA_HOSTS.has(host.toLowerCase())) throw new BlockedAddressError(`host ${host} is a cloud metadata name`);
    if (ipaddr.isValid(host) && !isPublicAddress(host)) throw new BlockedAddressError(`address ${host} is not a public address`);
  }

  /** A dns.lookup replacement for the socket: resolves, then refuses non-public answers. */
  function lookup(
    hostname: string,
    options: { family?: number | string; all?: boolean },
    callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void {
    dnsLookup(hostname, { all: true, family: Number(options.family) || 0 }, (error, addresses) => {
      if (error) return callback(error, []);
      const hostAllowed = isAllowed(hostname);
      const usable = addresses.filter((a) => hostAllowed || isAllowed(a.address) || isPublicAddress(a.address));
      if (usable.length === 0) {
        const seen = addresses.map((a) => a.address).join(', ');
        return callback(Object.assign(new BlockedAddressError(`${hostname} resolves to a non-public address (${seen})`), { code: 'EBLOCKED' }), []);
      }
      if (options.all) return callback(null, usable);
      callback(null, usable[0]!.address, usable[0]!.family);
    });
  }

  return { checkUrlHost, lookup };
}

export type SsrfGuard = ReturnType<typeof createSsrfGuard>;
