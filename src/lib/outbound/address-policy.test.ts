import { describe, expect, it } from 'vitest';
import { blockedRange } from './address-policy.ts';
import { parseAllowList } from './allow-list.ts';

describe('address policy', () => {
  it('refuses every special-purpose range, and IPv6 spellings of blocked IPv4 addresses', () => {
    const blocked = [
      '0.0.0.0',
      '0.1.2.3',
      '127.0.0.1',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '224.0.0.1',
      '255.255.255.255',
      '192.0.0.8',
      '192.0.2.1',
      '198.18.0.1',
      '198.51.100.1',
      '203.0.113.1',
      '240.0.0.1',
      '192.88.99.1',
      '::',
      '::1',
      'fe80::1',
      'fc00::1',
      'fd00::1',
      'fec0::1',
      'ff02::1',
      '100::1',
      '2001:db8::1',
      '2001:2::1',
      '2001:10::1',
      '2001:20::1',
      '3fff::1',
      '5f00::1',
      // IPv4-compatible, -mapped, -translated, NAT64 (both prefixes), 6to4, Teredo
      '::7f00:1',
      '::a9fe:a9fe',
      '::ffff:127.0.0.1',
      '::ffff:a9fe:a9fe',
      '::ffff:0:a00:1',
      '64:ff9b::7f00:1',
      '64:ff9b::a9fe:a9fe',
      '64:ff9b:1::808:808',
      '2002:808:808::1',
      '2001::1',
      '2001:0:4136:e378:8000:63bf:3fff:fdd2',
      // outside 2000::/3: not assigned as global unicast
      '4000::1',
      '1::1',
    ];
    for (const address of blocked) expect(blockedRange(address), address).not.toBeNull();
  });

  it('allows public unicast, and the NAT64 or IPv4-mapped spelling of a public IPv4', () => {
    for (const address of [
      '8.8.8.8',
      '1.1.1.1',
      '93.184.216.34',
      '2606:4700:4700::1111',
      '2a00:1450::1',
      '::ffff:8.8.8.8',
      '64:ff9b::808:808',
    ]) {
      expect(blockedRange(address), address).toBeNull();
    }
  });
});

describe('allow-list', () => {
  const allow = parseAllowList(['smtp.internal', '127.0.0.1:2525', '10.20.0.0/16', '[fd00::/8]:443', '::1']);
  const allows = (host: string, address: string, port: number) => allow.allows({ host, address, port });

  it('matches names, addresses and ranges, with or without a port', () => {
    expect(allows('SMTP.Internal.', '10.99.0.1', 25)).toBe(true);
    expect(allows('127.0.0.1', '127.0.0.1', 2525)).toBe(true);
    expect(allows('127.0.0.1', '127.0.0.1', 2526)).toBe(false);
    expect(allows('localhost', '::ffff:127.0.0.1', 2525)).toBe(true);
    expect(allows('feed', '10.20.3.4', 80)).toBe(true);
    expect(allows('feed', '10.21.0.1', 80)).toBe(false);
    expect(allows('v6', 'fd12::1', 443)).toBe(true);
    expect(allows('v6', 'fd12::1', 80)).toBe(false);
    expect(allows('[::1]', '::1', 8080)).toBe(true);
    expect(allows('other.internal', '10.99.0.1', 25)).toBe(false);
  });

  it('refuses an entry it cannot read, naming it', () => {
    expect(() => parseAllowList(['127.0.0.1:0'])).toThrow('"127.0.0.1:0": the port must be 1 to 65535');
    expect(() => parseAllowList(['10.0.0.0/33'])).toThrow('"10.0.0.0/33" is not a CIDR');
    expect(() => parseAllowList(['http://feed.internal/'])).toThrow('is neither a host name, an address nor a CIDR');
  });
});
