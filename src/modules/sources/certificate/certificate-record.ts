import { parseMerkleTreeLeaf, precertificateOf } from './ct-leaf.ts';
import { certificateFacts, fingerprint, tbsCertificateFacts, type CertificateFacts } from './x509.ts';

/** The log entry a certificate was read from. */
export interface LogEntryRef {
  /** The log's name as certstream gives it, or its URL for the collector. */
  name: string;
  /** The log's base URL without scheme, ending in `/` (certstream's `source.url` form): the log's identity. */
  url: string;
  index: number;
  /** The RFC 6962 get-entries URL of this one entry. */
  link: string;
}

/** One certificate as every input (certstream frame, CT log entry, PEM/DER file) hands it to the store. */
export interface CertificateRecord {
  /** Colon hex; null for a certstream frame that does not carry the DER. */
  sha256: string | null;
  sha1: string;
  entryType: 'x509' | 'precert';
  commonName: string | null;
  subjectOrg: string | null;
  issuerOrg: string | null;
  issuerCn: string | null;
  /** CN and subjectAltName DNS names, lower case, each once, as written (wildcards kept). */
  domains: string[];
  serialNumber: string | null;
  notBefore: number | null;
  notAfter: number | null;
  /** When the log accepted it or certstream saw it (epoch ms). */
  seen: number | null;
  log: LogEntryRef | null;
}

// A CN that is a host name (not "Acme Corp" or an e-mail address): no spaces, no @, a dot.
const HOST_LIKE = /^[^\s@/]+\.[^\s@/]+$/;

/** The names a certificate is for: its CN when that is a host name, then its SAN DNS names. */
export function domainsOf(commonName: string | null, dnsNames: string[]): string[] {
  const names = [...(commonName && HOST_LIKE.test(commonName) ? [commonName] : []), ...dnsNames];
  return [
    ...new Set(
      names.map((name) => name.trim().toLowerCase().replace(/\.$/, '')).filter((name) => HOST_LIKE.test(name)),
    ),
  ];
}

/** The log's identity from its URL: host and path without scheme, with one trailing slash. */
export const logIdOf = (url: string): string => `${url.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').replace(/\/+$/, '')}/`;

/**
 * A record from a decoded certificate. `der` is what the fingerprints are of: the certificate, or
 * for a precert entry the precertificate it was made from (the same bytes crt.sh and certstream
 * fingerprint, so one precertificate from several logs or from certstream is one record).
 */
export function recordOfFacts(
  facts: CertificateFacts,
  der: Uint8Array,
  entry: { entryType: CertificateRecord['entryType']; seen: number | null; log: LogEntryRef | null },
): CertificateRecord {
  return {
    sha256: fingerprint('sha256', der),
    sha1: fingerprint('sha1', der),
    entryType: entry.entryType,
    commonName: facts.commonName,
    subjectOrg: facts.subjectOrg,
    issuerOrg: facts.issuerOrg,
    issuerCn: facts.issuerCn,
    domains: domainsOf(facts.commonName, facts.dnsNames),
    serialNumber: facts.serialNumber,
    notBefore: facts.notBefore,
    notAfter: facts.notAfter,
    seen: entry.seen,
    log: entry.log,
  };
}

/**
 * One RFC 6962 get-entries entry (base64 `leaf_input` and `extra_data`) as a record; throws when
 * it does not parse. A precert entry's names come from the logged TBS; its fingerprints are of
 * the precertificate in extra_data (what crt.sh and certstream fingerprint). `seen` is the log's
 * timestamp.
 */
export function recordOfLogEntry(
  entry: { leaf_input: string; extra_data: string },
  log: LogEntryRef | null,
): CertificateRecord {
  const leaf = parseMerkleTreeLeaf(Buffer.from(entry.leaf_input, 'base64'));
  if (leaf.entryType === 'x509')
    return recordOfFacts(certificateFacts(leaf.certificate), leaf.certificate, {
      entryType: 'x509',
      seen: leaf.timestamp,
      log,
    });
  const precertificate = precertificateOf(Buffer.from(entry.extra_data, 'base64'));
  return recordOfFacts(tbsCertificateFacts(leaf.tbsCertificate), precertificate, {
    entryType: 'precert',
    seen: leaf.timestamp,
    log,
  });
}
