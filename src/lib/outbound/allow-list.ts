import ipaddr from 'ipaddr.js';
import { canonicalAddress, unbracketed } from './address-policy.ts';

/**
 * The operator's exceptions to the address policy (DRAGNET_OUTBOUND_ALLOW_HOSTS): internal
 * feeds, a relay on the private network, test servers. An entry is a host name (every address
 * it resolves to is allowed), an address or a CIDR, each optionally with `:port` (IPv6 in
 * brackets then: `[fd00::/8]:25`); without a port every port is allowed.
 */
type Entry =
  | { kind: 'host'; host: string; port?: number }
  | { kind: 'range'; range: [ipaddr.IPv4 | ipaddr.IPv6, number]; port?: number };

const HOST_NAME = /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/;

export const normalHost = (host: string) => unbracketed(host.trim().toLowerCase()).replace(/\.$/, '');

function parseEntry(raw: string): Entry {
  const text = raw.trim().toLowerCase();
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  let body = text;
  let port: string | undefined;
  if (bracketed) {
    body = bracketed[1]!;
    port = bracketed[2];
  } else if (/^[^:]+:\d+$/.test(text)) [body, port] = text.split(':') as [string, string];
  if (port !== undefined && !(/^\d{1,5}$/.test(port) && Number(port) >= 1 && Number(port) <= 65535))
    throw new Error(`"${raw}": the port must be 1 to 65535`);
  const withPort = port === undefined ? {} : { port: Number(port) };
  if (/^[0-9a-f:.]+\/\d+$/.test(body)) {
    try {
      const [address, bits] = ipaddr.parseCIDR(body);
      return {
        kind: 'range',
        range: [
          ipaddr.process(address.toString()),
          address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() ? bits - 96 : bits,
        ],
        ...withPort,
      };
    } catch {
      throw new Error(`"${raw}" is not a CIDR such as 10.20.0.0/16`);
    }
  }
  if (ipaddr.isValid(body)) {
    const address = ipaddr.process(body);
    return { kind: 'range', range: [address, address.kind() === 'ipv4' ? 32 : 128], ...withPort };
  }
  if (!HOST_NAME.test(normalHost(body))) throw new Error(`"${raw}" is neither a host name, an address nor a CIDR`);
  return { kind: 'host', host: normalHost(body), ...withPort };
}

export function parseAllowList(entries: string[]) {
  const parsed = entries
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map(parseEntry);
  return {
    /**
     * Whether a connection to `host` (as configured), at `address` (as resolved), on `port` is
     * allowed; without an address, whether the name itself is.
     */
    allows(target: { host: string; address?: string; port: number }): boolean {
      const host = normalHost(target.host);
      const address = target.address === undefined ? null : ipaddr.parse(canonicalAddress(target.address));
      return parsed.some((entry) => {
        if (entry.port !== undefined && entry.port !== target.port) return false;
        if (entry.kind === 'host') return entry.host === host;
        return address !== null && entry.range[0].kind() === address.kind() && address.match(entry.range);
      });
    },
  };
}

export type AllowList = ReturnType<typeof parseAllowList>;
