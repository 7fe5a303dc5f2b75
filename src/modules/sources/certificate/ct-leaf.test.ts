import { describe, expect, it } from 'vitest';
import { CtFormatError, parseMerkleTreeLeaf, precertificateOf } from './ct-leaf.ts';

/** Big-endian bytes of an unsigned integer. */
const uint = (value: number, size: number) => {
  const bytes = Buffer.alloc(size);
  for (let i = size - 1, rest = value; i >= 0; i--, rest = Math.floor(rest / 256)) bytes[i] = rest % 256;
  return bytes;
};
const vector = (lengthBytes: number, body: Buffer) => Buffer.concat([uint(body.length, lengthBytes), body]);

// 2026-03-10T09:00:00.123Z: more than 32 bits of milliseconds.
const TIMESTAMP = 1_773_133_200_123;
const CERT = Buffer.from('3082010a0201', 'hex');
const TBS = Buffer.from('30820105a003020102', 'hex');
const KEY_HASH = Buffer.alloc(32, 0xab);

const x509Leaf = (extensions = Buffer.alloc(0)) =>
  Buffer.concat([Buffer.from([0, 0]), uint(TIMESTAMP, 8), uint(0, 2), vector(3, CERT), vector(2, extensions)]);
const precertLeaf = Buffer.concat([
  Buffer.from([0, 0]),
  uint(TIMESTAMP, 8),
  uint(1, 2),
  KEY_HASH,
  vector(3, TBS),
  vector(2, Buffer.alloc(0)),
]);

describe('parseMerkleTreeLeaf (RFC 6962 3.4)', () => {
  it('reads an x509_entry: its timestamp (uint64 ms) and its ASN.1Cert (24-bit length)', () => {
    const leaf = parseMerkleTreeLeaf(x509Leaf());
    expect(leaf).toEqual({ timestamp: TIMESTAMP, entryType: 'x509', certificate: CERT });
    expect(new Date(leaf.timestamp).toISOString()).toBe('2026-03-10T09:00:00.123Z');
  });

  it('reads a precert_entry: issuer_key_hash[32] skipped, then the TBSCertificate', () => {
    expect(parseMerkleTreeLeaf(precertLeaf)).toEqual({
      timestamp: TIMESTAMP,
      entryType: 'precert',
      tbsCertificate: TBS,
    });
  });

  it('accepts CtExtensions', () => {
    expect(parseMerkleTreeLeaf(x509Leaf(Buffer.from('0102', 'hex'))).entryType).toBe('x509');
  });

  it('rejects what is not a v1 timestamped entry, a truncated leaf and trailing bytes, naming the field', () => {
    const cases: [Buffer, string][] = [
      [Buffer.concat([Buffer.from([1]), x509Leaf().subarray(1)]), 'leaf_input: version 1 is not v1 (0)'],
      [
        Buffer.concat([Buffer.from([0, 1]), x509Leaf().subarray(2)]),
        'leaf_input: leaf_type 1 is not timestamped_entry (0)',
      ],
      [
        Buffer.concat([x509Leaf().subarray(0, 10), uint(2, 2), x509Leaf().subarray(12)]),
        'leaf_input: entry_type 2 is neither x509_entry (0) nor precert_entry (1)',
      ],
      [x509Leaf().subarray(0, 16), 'leaf_input: ASN.1Cert runs past the end (16 bytes)'],
      [precertLeaf.subarray(0, 30), 'leaf_input: issuer_key_hash runs past the end (30 bytes)'],
      [x509Leaf().subarray(0, 5), 'leaf_input: timestamp runs past the end (5 bytes)'],
      [Buffer.concat([x509Leaf(), Buffer.from([0])]), 'leaf_input: 1 bytes left after extensions'],
      [
        Buffer.concat([
          Buffer.from([0, 0]),
          uint(TIMESTAMP, 8),
          uint(0, 2),
          vector(3, Buffer.alloc(0)),
          vector(2, Buffer.alloc(0)),
        ]),
        'leaf_input: empty ASN.1Cert',
      ],
    ];
    for (const [bytes, message] of cases) {
      expect(() => parseMerkleTreeLeaf(bytes)).toThrow(new CtFormatError(message));
    }
  });
});

describe('precertificateOf (PrecertChainEntry)', () => {
  const PRECERT = Buffer.from('308201ff', 'hex');
  const chain = (certificates: Buffer[]) => vector(3, Buffer.concat(certificates.map((c) => vector(3, c))));

  it('returns the pre_certificate and checks the chain that follows', () => {
    expect(
      precertificateOf(
        Buffer.concat([vector(3, PRECERT), chain([Buffer.from('3001', 'hex'), Buffer.from('3002', 'hex')])]),
      ),
    ).toEqual(PRECERT);
    expect(precertificateOf(Buffer.concat([vector(3, PRECERT), chain([])]))).toEqual(PRECERT);
  });

  it('rejects an empty precertificate, a broken chain and trailing bytes', () => {
    expect(() => precertificateOf(Buffer.concat([vector(3, Buffer.alloc(0)), chain([])]))).toThrow(
      'extra_data: empty pre_certificate',
    );
    expect(() =>
      precertificateOf(Buffer.concat([vector(3, PRECERT), vector(3, Buffer.from('000009ff', 'hex'))])),
    ).toThrow('extra_data precertificate_chain: chain certificate runs past the end');
    expect(() => precertificateOf(Buffer.concat([vector(3, PRECERT), chain([]), Buffer.from([7])]))).toThrow(
      'extra_data: 1 bytes left after precertificate_chain',
    );
    expect(() => precertificateOf(vector(3, PRECERT))).toThrow(
      'extra_data: precertificate_chain length runs past the end',
    );
  });
});
