import { DAY_MS, HOUR_MS } from '../../../lib/clock.ts';
import type { SourceContext } from '../kit/source.ts';
import type { CertificateRecord } from './certificate-record.ts';
import { writeCertificates } from './certificate-store.ts';
import { fingerprint } from './x509.ts';

/**
 * Synthetic demo certificates for the fictional acme-bank.com: its own certificates, lookalikes
 * and unrelated names, as CT entries of a made-up log. Fingerprints are digests of a demo label,
 * not of any real certificate.
 */
interface DemoCertificate {
  daysAgo: number;
  names: string[];
  issuer: [org: string, cn: string];
  subjectOrg?: string;
  precert?: boolean;
}

const LETS_ENCRYPT: [string, string] = ["Let's Encrypt", 'R11'];
const DEMO: DemoCertificate[] = [
  { daysAgo: 12, names: ['acme-bank.com', 'www.acme-bank.com'], issuer: LETS_ENCRYPT },
  {
    daysAgo: 9,
    names: ['login.acme-bank.com'],
    issuer: ['DigiCert Inc', 'DigiCert Global G2 TLS RSA SHA256 2020 CA1'],
    subjectOrg: 'Acme Bank, N.A.',
    precert: true,
  },
  {
    daysAgo: 9,
    names: ['login.acme-bank.com'],
    issuer: ['DigiCert Inc', 'DigiCert Global G2 TLS RSA SHA256 2020 CA1'],
    subjectOrg: 'Acme Bank, N.A.',
  },
  { daysAgo: 6, names: ['shop.example-store.com', 'www.shop.example-store.com'], issuer: LETS_ENCRYPT },
  {
    daysAgo: 4,
    names: ['acme-bank-secure-login.com', 'www.acme-bank-secure-login.com'],
    issuer: ['ZeroSSL', 'ZeroSSL ECC Domain Secure Site CA'],
  },
  { daysAgo: 3, names: ['acme-bank.com.account-verify.net'], issuer: ["Let's Encrypt", 'E6'] },
  {
    daysAgo: 2,
    names: ['mail.northwind-traders.com'],
    issuer: ['Sectigo Limited', 'Sectigo RSA Domain Validation Secure Server CA'],
  },
  {
    daysAgo: 1,
    names: ['acmebank-support.net', '*.acmebank-support.net'],
    issuer: ['Google Trust Services', 'WE1'],
    precert: true,
  },
];

const LOG = { name: "Demo 'Lumen2026' log", url: 'ct.demo.dragnet.test/logs/lumen2026/' };
const FIRST_INDEX = 4_200_000;

function demoRecord(certificate: DemoCertificate, index: number, now: number): CertificateRecord {
  const label = `dragnet-demo-certificate:${index}:${certificate.names.join(',')}`;
  const issued = now - certificate.daysAgo * DAY_MS - HOUR_MS;
  const entry = FIRST_INDEX + index;
  return {
    sha256: fingerprint('sha256', Buffer.from(label)),
    sha1: fingerprint('sha1', Buffer.from(label)),
    entryType: certificate.precert ? 'precert' : 'x509',
    commonName: certificate.names[0]!,
    subjectOrg: certificate.subjectOrg ?? null,
    issuerOrg: certificate.issuer[0],
    issuerCn: certificate.issuer[1],
    domains: certificate.names,
    serialNumber: fingerprint('sha1', Buffer.from(`serial:${label}`))
      .replaceAll(':', '')
      .slice(0, 36)
      .replace(/^0+/, ''),
    notBefore: issued,
    notAfter: issued + 90 * DAY_MS,
    seen: issued + 5 * 60_000,
    log: { ...LOG, index: entry, link: `https://${LOG.url}ct/v1/get-entries?start=${entry}&end=${entry}` },
  };
}

/** Stores the demo certificates, each learned of the day it was logged; returns how many were new. */
export async function loadDemoCertificates(context: SourceContext, now: number): Promise<number> {
  let added = 0;
  for (const [index, certificate] of DEMO.entries()) {
    const record = demoRecord(certificate, index, now);
    added += (await writeCertificates(context, [record], record.seen!)).added;
  }
  return added;
}
