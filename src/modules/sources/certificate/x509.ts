import { createHash } from 'node:crypto';
import { AsnConvert } from '@peculiar/asn1-schema';
import {
  Certificate,
  id_ce_subjectAltName,
  SubjectAlternativeName,
  TBSCertificate,
  type Name,
} from '@peculiar/asn1-x509';

/** What Dragnet keeps of an X.509 certificate or precertificate TBS (RFC 5280 section 4.1). */
export interface CertificateFacts {
  commonName: string | null;
  subjectOrg: string | null;
  issuerOrg: string | null;
  issuerCn: string | null;
  /** The subjectAltName dNSNames, as written (a wildcard keeps its `*.`). */
  dnsNames: string[];
  /** Upper-case hex without leading zeros, as certstream and OpenSSL print it. */
  serialNumber: string;
  notBefore: number;
  notAfter: number;
  /** Carries the CT poison extension (RFC 6962 section 3.1): a precertificate, not a usable certificate. */
  poisoned: boolean;
}

const COMMON_NAME = '2.5.4.3';
const ORGANIZATION = '2.5.4.10';
const CT_POISON = '1.3.6.1.4.1.11129.2.4.3';

/** The last value of an attribute in a name (the most specific, when a name repeats it). */
function attribute(name: Name, type: string): string | null {
  let value: string | null = null;
  for (const rdn of name) {
    for (const entry of rdn) if (entry.type === type) value = entry.value.toString().trim() || null;
  }
  return value;
}

const serialHex = (serial: ArrayBuffer) =>
  Buffer.from(serial)
    .toString('hex')
    .toUpperCase()
    .replace(/^0+(?=.)/, '');

function factsOfTbs(tbs: TBSCertificate): CertificateFacts {
  const extensions = tbs.extensions ?? [];
  const san = extensions.find((extension) => extension.extnID === id_ce_subjectAltName);
  const dnsNames = san
    ? AsnConvert.parse(san.extnValue, SubjectAlternativeName).flatMap((name) => (name.dNSName ? [name.dNSName] : []))
    : [];
  return {
    commonName: attribute(tbs.subject, COMMON_NAME),
    subjectOrg: attribute(tbs.subject, ORGANIZATION),
    issuerOrg: attribute(tbs.issuer, ORGANIZATION),
    issuerCn: attribute(tbs.issuer, COMMON_NAME),
    dnsNames,
    serialNumber: serialHex(tbs.serialNumber),
    notBefore: tbs.validity.notBefore.getTime().getTime(),
    notAfter: tbs.validity.notAfter.getTime().getTime(),
    poisoned: extensions.some((extension) => extension.extnID === CT_POISON),
  };
}

/** A DER Certificate's facts; throws when the bytes are no certificate. */
export const certificateFacts = (der: Uint8Array): CertificateFacts =>
  factsOfTbs(AsnConvert.parse(der, Certificate).tbsCertificate);

/** A DER TBSCertificate's facts (a precert log entry logs only the TBS). */
export const tbsCertificateFacts = (der: Uint8Array): CertificateFacts =>
  factsOfTbs(AsnConvert.parse(der, TBSCertificate));

/** A digest in the colon-separated upper-case hex that certstream and OpenSSL print. */
export const fingerprint = (algorithm: 'sha1' | 'sha256', der: Uint8Array): string =>
  createHash(algorithm)
    .update(der)
    .digest('hex')
    .toUpperCase()
    .replace(/(..)(?!$)/g, '$1:');
