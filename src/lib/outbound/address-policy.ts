import ipaddr from 'ipaddr.js';

/**
 * Which addresses Dragnet may connect out to on a tenant's or a feed's behalf: public unicast
 * only. ipaddr.js names the IANA special-purpose ranges (IPv4: unspecified 0/8, loopback,
 * RFC 1918, link-local 169.254/16 (cloud metadata), CGNAT 100.64/10, multicast, broadcast,
 * IETF protocol assignments, documentation, benchmarking, 240/4, 6to4 relay, AS112, AMT;
 * IPv6: unspecified, loopback, link-local, unique-local, site-local, multicast, IPv4-mapped
 * and -translated, NAT64, discard-only 100::/64, 6to4, Teredo, ORCHID, documentation,
 * benchmarking, segment routing, ...); anything it calls `unicast` is allowed, except IPv6
 * outside 2000::/3, the only block IANA hands out as global unicast: that catches what
 * ipaddr.js has no name for, such as the deprecated IPv4-compatible ::/96 (`[::a9fe:a9fe]`
 * reaches 169.254.169.254 on some stacks) and any range assigned later.
 *
 * An IPv6 address that carries an IPv4 address is judged by that IPv4 (IPv4-mapped
 * ::ffff:0:0/96, which a dual-stack socket sends to the IPv4 itself, and the NAT64 well-known
 * prefix 64:ff9b::/96, which a DNS64 resolver hands out for public IPv4-only names) or refused
 * (everything else: IPv4-compatible, IPv4-translated, local-use NAT64 64:ff9b:1::/48, 6to4 and
 * Teredo, whose relays the operator does not control).
 */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

/** Why `address` may not be connected to (the range's name), or null for a public address. */
export function blockedRange(address: string): string | null {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') {
    const range = parsed.range();
    return range === 'unicast' ? null : range;
  }
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress() || v6.match(NAT64_WELL_KNOWN)) {
    const embedded = ipaddr.fromByteArray(v6.toByteArray().slice(12)).toString();
    const range = blockedRange(embedded);
    return range === null ? null : `${range} (embedded ${embedded})`;
  }
  const range = v6.range();
  if (range !== 'unicast') return range;
  if (v6.match(IPV4_COMPATIBLE)) return 'IPv4-compatible ::/96';
  return v6.match(GLOBAL_UNICAST_V6) ? null : 'outside global unicast 2000::/3';
}

/** A host as URLs spell an IPv6 address (`[::1]`) without its brackets. */
export const unbracketed = (host: string) => host.replace(/^\[|\]$/g, '');

/** The address as one canonical string: IPv4-mapped IPv6 as its IPv4, IPv6 in its shortest form. */
export function canonicalAddress(address: string): string {
  return ipaddr.process(unbracketed(address)).toString();
}
