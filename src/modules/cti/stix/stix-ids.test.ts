import { v5 } from 'uuid';
import { describe, expect, it } from 'vitest';
import { scoId } from './sco-ids.ts';
import { uuidV5Generator } from './uuid5.ts';

const STIX_NAMESPACE = '00abedb4-aa42-466c-9c01-fed23315a9b7';

describe('STIX ids', () => {
  it("uuidV5Generator gives uuid's v5 for any name", () => {
    const generate = uuidV5Generator(STIX_NAMESPACE);
    for (const name of ['', 'a', '{"value":"example.com"}', 'ünïcødé ✓', 'x'.repeat(5000)])
      expect(generate(name)).toBe(v5(name, STIX_NAMESPACE));
    expect(uuidV5Generator('6ba7b810-9dad-11d1-80b4-00c04fd430c8')('www.example.com')).toBe(
      '2ed6657d-e927-568b-95e1-2665a8aea6a2',
    );
  });

  it('an SCO id is UUIDv5 in the STIX namespace over its contributing properties, canonical JSON', () => {
    expect(scoId('domain-name', { value: 'example.com', resolves_to_refs: ['ipv4-addr--x'] })).toBe(
      `domain-name--${v5('{"value":"example.com"}', STIX_NAMESPACE)}`,
    );
    // Keys sorted (RFC 8785); non-contributing properties left out.
    expect(scoId('user-account', { user_id: '42', account_type: 'discord', display_name: 'x' })).toBe(
      `user-account--${v5('{"account_type":"discord","user_id":"42"}', STIX_NAMESPACE)}`,
    );
    // One hash only, the first of MD5, SHA-1, SHA-256, SHA-512 present.
    expect(scoId('x509-certificate', { hashes: { 'SHA-256': 'AA', 'SHA-1': 'BB' }, serial_number: '01' })).toBe(
      `x509-certificate--${v5('{"hashes":{"SHA-1":"BB"},"serial_number":"01"}', STIX_NAMESPACE)}`,
    );
    expect(scoId('file', { name: 'dump.sql', size: 10 })).toBe(`file--${v5('{"name":"dump.sql"}', STIX_NAMESPACE)}`);
    // Asked twice (the cache), the same id.
    expect(scoId('url', { value: 'https://a.example/' })).toBe(scoId('url', { value: 'https://a.example/' }));
  });
});
