import { X509Certificate } from 'node:crypto';
import selfsigned from 'selfsigned';
import { describe, expect, it } from 'vitest';
import { certificateFacts, fingerprint } from './x509.ts';

describe('certificateFacts (a real certificate, generated with selfsigned and checked against OpenSSL)', () => {
  it('reads subject, issuer, DNS names, serial, validity and fingerprints', async () => {
    const notBefore = new Date('2026-03-01T10:00:00Z');
    const notAfter = new Date('2026-05-30T10:00:00Z');
    const pems = await selfsigned.generate(
      [
        { name: 'commonName', value: 'login.acme-bank.com' },
        { name: 'organizationName', value: 'Acme Bank N.A.' },
      ],
      {
        keyType: 'ec',
        algorithm: 'sha256',
        notBeforeDate: notBefore,
        notAfterDate: notAfter,
        extensions: [
          {
            name: 'subjectAltName',
            altNames: [
              { type: 2, value: 'login.acme-bank.com' },
              { type: 2, value: '*.acme-bank.com' },
              { type: 1, value: 'pki@acme-bank.com' },
              { type: 7, ip: '192.0.2.10' },
            ],
          },
        ],
      },
    );
    const openssl = new X509Certificate(pems.cert);
    const facts = certificateFacts(openssl.raw);
    expect(facts).toEqual({
      commonName: 'login.acme-bank.com',
      subjectOrg: 'Acme Bank N.A.',
      // Self-signed: the issuer is the subject.
      issuerOrg: 'Acme Bank N.A.',
      issuerCn: 'login.acme-bank.com',
      dnsNames: ['login.acme-bank.com', '*.acme-bank.com'],
      serialNumber: openssl.serialNumber.toUpperCase().replace(/^0+/, ''),
      notBefore: notBefore.getTime(),
      notAfter: notAfter.getTime(),
      poisoned: false,
    });
    expect(fingerprint('sha256', openssl.raw)).toBe(openssl.fingerprint256);
    expect(fingerprint('sha1', openssl.raw)).toBe(openssl.fingerprint);
  });

  it('throws on bytes that are no certificate', () => {
    expect(() => certificateFacts(Buffer.from('3003020101', 'hex'))).toThrow();
  });
});
