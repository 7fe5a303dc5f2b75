import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { certstreamRecord, parseCertstreamFrame } from './certstream.ts';

// A real certstream frame (CaliDog/certstream-server's example, /work/shared/fixtures/SOURCES.md).
const FIXTURE = '/work/shared/fixtures/certstream/example.json';

const colonHex = (algorithm: string, bytes: Buffer) =>
  createHash(algorithm).update(bytes).digest('hex').toUpperCase().match(/../g)!.join(':');

/** A minimal certificate_update frame; `leaf` and `data` override its parts. */
const frame = (leaf: Record<string, unknown> = {}, data: Record<string, unknown> = {}) =>
  JSON.stringify({
    message_type: 'certificate_update',
    data: {
      update_type: 'PrecertLogEntry',
      cert_index: 7,
      seen: 1_773_133_200.5,
      source: { name: "Google 'Argon2026h1' log", url: 'ct.googleapis.com/logs/us1/argon2026h1/' },
      leaf_cert: {
        all_domains: ['Login.Acme-Bank.com', '*.acme-bank.com', 'login.acme-bank.com.'],
        fingerprint: 'ab:cd:ef:01:23:45:67:89:ab:cd:ef:01:23:45:67:89:ab:cd:ef:01',
        serial_number: '0a1b',
        not_before: 1_773_000_000,
        not_after: 1_780_000_000,
        subject: { CN: 'login.acme-bank.com', O: 'Acme Bank, N.A.' },
        issuer: { CN: 'WE1', O: 'Google Trust Services' },
        ...leaf,
      },
      ...data,
    },
  });

describe('parseCertstreamFrame', () => {
  it("reads a frame's missing issuer, names and validity from as_der, and reads a saved frame's data alone", () => {
    const line = readFileSync(
      new URL('../../../../test/fixtures/certificate/certstream-lines.jsonl', import.meta.url),
      'utf8',
    ).split('\n')[1]!;
    const full = JSON.parse(line) as {
      data: { leaf_cert: Record<string, unknown>; chain?: unknown; update_type?: string };
    };
    const expected = parseCertstreamFrame(line);
    expect(expected).toMatchObject({
      issuerOrg: 'Globex Test Trust',
      issuerCn: 'Globex Test Trust ECC CA 1',
      domains: ['login.globex-pay.com', 'www.login.globex-pay.com'],
    });
    const { as_der, fingerprint } = full.data.leaf_cert;
    delete full.data.chain;
    delete full.data.update_type;
    full.data.leaf_cert = { as_der, fingerprint };
    expect(certstreamRecord(full.data, () => {})).toEqual(expected);
  });

  it('reads the certstream example frame (../shared/fixtures, when there)', () => {
    if (!existsSync(FIXTURE)) return;
    expect(parseCertstreamFrame(readFileSync(FIXTURE, 'utf8').trim())).toEqual({
      sha256: null,
      sha1: '84:E0:18:01:52:93:08:E0:BC:1C:DA:C8:B4:48:64:76:8A:61:56:32',
      entryType: 'x509',
      commonName: 'access.smm-cheap.com',
      subjectOrg: null,
      // No leaf_cert.issuer in this (older) frame: the chain's first certificate is the issuer.
      issuerOrg: "Let's Encrypt",
      issuerCn: "Let's Encrypt Authority X3",
      domains: ['access.smm-cheap.com', 'www.access.smm-cheap.com'],
      serialNumber: '37A3A72033B9AFF73A4BED5BB4F7CE6746E',
      notBefore: 1_581_737_741_000,
      notAfter: 1_589_513_741_000,
      seen: 1_581_741_558_478,
      log: {
        name: "Google 'Argon2020' log",
        url: 'ct.googleapis.com/logs/argon2020/',
        index: 343_999_487,
        link: 'http://ct.googleapis.com/logs/argon2020/ct/v1/get-entries?start=343999487&end=343999487',
      },
    });
  });

  it('reads a precertificate frame with leaf_cert.issuer; names lower case, each once', () => {
    expect(parseCertstreamFrame(frame())).toMatchObject({
      sha1: 'AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01',
      entryType: 'precert',
      issuerOrg: 'Google Trust Services',
      issuerCn: 'WE1',
      subjectOrg: 'Acme Bank, N.A.',
      domains: ['login.acme-bank.com', '*.acme-bank.com'],
      serialNumber: '0A1B',
      seen: 1_773_133_200_500,
      log: {
        url: 'ct.googleapis.com/logs/us1/argon2026h1/',
        index: 7,
        link: 'https://ct.googleapis.com/logs/us1/argon2026h1/ct/v1/get-entries?start=7&end=7',
      },
    });
  });

  it('takes the SHA-256 from as_der (full stream) when it is the DER the fingerprint is of', () => {
    const der = Buffer.from('3082 0001 demo certificate bytes');
    const parsed = parseCertstreamFrame(frame({ as_der: der.toString('base64'), fingerprint: colonHex('sha1', der) }));
    expect(parsed).toMatchObject({ sha1: colonHex('sha1', der), sha256: colonHex('sha256', der) });
    expect(parseCertstreamFrame(frame({ as_der: der.toString('base64') }))).toBe(
      'data.leaf_cert.as_der is not the DER the fingerprint is of',
    );
  });

  it('skips heartbeats and dns_entries frames, and keeps a frame without its log as a record without one', () => {
    expect(parseCertstreamFrame('{"message_type":"heartbeat","timestamp":1773133200.1}')).toBeNull();
    expect(parseCertstreamFrame('{"message_type":"dns_entries","data":["login.acme-bank.com"]}')).toBeNull();
    expect(parseCertstreamFrame(frame({}, { source: undefined }))).toMatchObject({ log: null });
  });

  it('says why a frame is rejected', () => {
    const cases: [string, string][] = [
      ['{"message_type":"certificate_update"', 'not a JSON frame'],
      ['[1,2]', 'not a JSON object'],
      [
        '{"message_type":"subscribe","data":[]}',
        'message_type "subscribe" is not certificate_update, heartbeat or dns_entries',
      ],
      ['{"message_type":"certificate_update","data":[]}', 'data is not an object'],
      [frame({}, { update_type: 'X509' }), 'data.update_type must be X509LogEntry or PrecertLogEntry'],
      [frame({}, { leaf_cert: null }), 'data.leaf_cert is not an object'],
      [
        frame({ fingerprint: 'AB:CD' }),
        'data.leaf_cert.fingerprint is not a SHA-1 fingerprint (20 colon-separated hex bytes)',
      ],
      [frame({ all_domains: 'acme-bank.com' }), 'data.leaf_cert.all_domains is not a list of names'],
    ];
    for (const [line, reason] of cases) expect(parseCertstreamFrame(line), line).toBe(reason);
  });
});
