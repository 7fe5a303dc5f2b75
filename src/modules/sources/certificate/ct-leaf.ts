/**
 * The binary structures of an RFC 6962 `get-entries` entry (section 3.4 and 4.6): `leaf_input`,
 * a MerkleTreeLeaf, and `extra_data`, the chain the log was given. Framing only: the certificate
 * or TBSCertificate inside stays DER for the X.509 decoder (x509.ts).
 */

/** A log entry's leaf: what was logged, and when. */
export type CtLeaf =
  | { timestamp: number; entryType: 'x509'; certificate: Uint8Array }
  | { timestamp: number; entryType: 'precert'; tbsCertificate: Uint8Array };

/** A structure that does not parse; the message says which field and why. */
export class CtFormatError extends Error {}

/** A reader over TLS presentation-language bytes (RFC 5246 section 4): big-endian integers, length-prefixed vectors. */
function tlsReader(bytes: Uint8Array, what: string) {
  let at = 0;
  const need = (count: number, field: string) => {
    if (at + count > bytes.length)
      throw new CtFormatError(`${what}: ${field} runs past the end (${bytes.length} bytes)`);
  };
  const uint = (size: number, field: string): number => {
    need(size, field);
    let value = 0;
    // Multiplication, not shifts: a uint64 timestamp exceeds 32 bits (and stays below 2^53).
    for (let i = 0; i < size; i++) value = value * 256 + bytes[at + i]!;
    at += size;
    return value;
  };
  const take = (count: number, field: string): Uint8Array => {
    need(count, field);
    const slice = bytes.subarray(at, at + count);
    at += count;
    return slice;
  };
  return {
    uint,
    take,
    /** `opaque field<..2^(8·lengthBytes)-1>`: a length, then that many bytes. */
    vector: (lengthBytes: number, field: string) => take(uint(lengthBytes, `${field} length`), field),
    get done() {
      return at === bytes.length;
    },
    end(field: string) {
      if (at !== bytes.length) throw new CtFormatError(`${what}: ${bytes.length - at} bytes left after ${field}`);
    },
  };
}

const V1 = 0;
const TIMESTAMPED_ENTRY = 0;
const X509_ENTRY = 0;
const PRECERT_ENTRY = 1;
const KEY_HASH_BYTES = 32;

/**
 * MerkleTreeLeaf { version v1, leaf_type timestamped_entry, TimestampedEntry { uint64 timestamp
 * (ms), LogEntryType entry_type, x509_entry: ASN.1Cert<1..2^24-1> | precert_entry: PreCert {
 * issuer_key_hash[32], TBSCertificate<1..2^24-1> }, CtExtensions<0..2^16-1> } }.
 */
export function parseMerkleTreeLeaf(leafInput: Uint8Array): CtLeaf {
  const reader = tlsReader(leafInput, 'leaf_input');
  const version = reader.uint(1, 'version');
  if (version !== V1) throw new CtFormatError(`leaf_input: version ${version} is not v1 (0)`);
  const leafType = reader.uint(1, 'leaf_type');
  if (leafType !== TIMESTAMPED_ENTRY)
    throw new CtFormatError(`leaf_input: leaf_type ${leafType} is not timestamped_entry (0)`);
  const timestamp = reader.uint(8, 'timestamp');
  const entryType = reader.uint(2, 'entry_type');
  let leaf: CtLeaf;
  if (entryType === X509_ENTRY) {
    leaf = { timestamp, entryType: 'x509', certificate: nonEmpty(reader.vector(3, 'ASN.1Cert'), 'ASN.1Cert') };
  } else if (entryType === PRECERT_ENTRY) {
    // The hash of the issuer's key identifies the final issuer; the TBS names it as well.
    reader.take(KEY_HASH_BYTES, 'issuer_key_hash');
    leaf = {
      timestamp,
      entryType: 'precert',
      tbsCertificate: nonEmpty(reader.vector(3, 'TBSCertificate'), 'TBSCertificate'),
    };
  } else {
    throw new CtFormatError(`leaf_input: entry_type ${entryType} is neither x509_entry (0) nor precert_entry (1)`);
  }
  reader.vector(2, 'extensions');
  reader.end('extensions');
  return leaf;
}

function nonEmpty(bytes: Uint8Array, field: string): Uint8Array {
  if (bytes.length === 0) throw new CtFormatError(`leaf_input: empty ${field}`);
  return bytes;
}

/**
 * The precertificate of a precert entry's extra_data, a PrecertChainEntry { ASN.1Cert
 * pre_certificate; ASN.1Cert precertificate_chain<0..2^24-1> }: the CA-signed certificate with
 * the poison extension that the leaf's TBSCertificate was made from. (An x509 entry's extra_data
 * holds only the issuer chain, which Dragnet does not keep.)
 */
export function precertificateOf(extraData: Uint8Array): Uint8Array {
  const reader = tlsReader(extraData, 'extra_data');
  const precertificate = reader.vector(3, 'pre_certificate');
  if (precertificate.length === 0) throw new CtFormatError('extra_data: empty pre_certificate');
  const chain = tlsReader(reader.vector(3, 'precertificate_chain'), 'extra_data precertificate_chain');
  while (!chain.done) chain.vector(3, 'chain certificate');
  reader.end('precertificate_chain');
  return precertificate;
}
