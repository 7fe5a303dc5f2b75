import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import {
  AlgorithmIdentifier,
  AttributeTypeAndValue,
  AttributeValue,
  BasicConstraints,
  Certificate,
  Extension,
  Extensions,
  GeneralName,
  id_ce_basicConstraints,
  id_ce_subjectAltName,
  Name,
  RelativeDistinguishedName,
  SubjectAlternativeName,
  SubjectPublicKeyInfo,
  TBSCertificate,
  Validity,
  Version,
} from '@peculiar/asn1-x509';

/**
 * Real X.509 certificates and precertificates (ECDSA P-256, signed by a test CA made here) and a
 * real RFC 6962 log serving them over HTTP (get-sth, get-entries with MerkleTreeLeaf and
 * extra_data encoding), for the ct-logs collector's tests.
 */

const ECDSA_WITH_SHA256 = '1.2.840.10045.4.3.2';
const COMMON_NAME = '2.5.4.3';
const ORGANIZATION = '2.5.4.10';
const CT_POISON = '1.3.6.1.4.1.11129.2.4.3';
const ASN1_NULL = new Uint8Array([0x05, 0x00]);

const nameOf = (attributes: [type: string, value: string][]) =>
  new Name(
    attributes.map(
      ([type, value]) =>
        new RelativeDistinguishedName([
          new AttributeTypeAndValue({ type, value: new AttributeValue({ utf8String: value }) }),
        ]),
    ),
  );

const bufferOf = (bytes: ArrayBuffer) => Buffer.from(bytes);
const arrayBufferOf = (bytes: Buffer) =>
  bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer;

function signed(tbs: TBSCertificate, key: KeyObject): Buffer {
  const signature = sign('sha256', bufferOf(AsnConvert.serialize(tbs)), key);
  const certificate = new Certificate({
    tbsCertificate: tbs,
    signatureAlgorithm: new AlgorithmIdentifier({ algorithm: ECDSA_WITH_SHA256 }),
    signatureValue: arrayBufferOf(signature),
  });
  return bufferOf(AsnConvert.serialize(certificate));
}

export interface TestCa {
  name: Name;
  key: KeyObject;
  der: Buffer;
  /** SHA-256 of the CA's SubjectPublicKeyInfo: a precert entry's issuer_key_hash. */
  keyHash: Buffer;
}

function keyPair() {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  return { privateKey, spki, info: AsnConvert.parse(spki, SubjectPublicKeyInfo) };
}

/** A self-signed CA with the given O and CN. */
export function createTestCa(org: string, cn: string): TestCa {
  const { privateKey, spki, info } = keyPair();
  const name = nameOf([
    [ORGANIZATION, org],
    [COMMON_NAME, cn],
  ]);
  const tbs = new TBSCertificate({
    version: Version.v3,
    serialNumber: new Uint8Array([0x01]).buffer,
    signature: new AlgorithmIdentifier({ algorithm: ECDSA_WITH_SHA256 }),
    issuer: name,
    validity: new Validity({ notBefore: new Date('2025-01-01T00:00:00Z'), notAfter: new Date('2035-01-01T00:00:00Z') }),
    subject: name,
    subjectPublicKeyInfo: info,
    extensions: new Extensions([
      new Extension({
        extnID: id_ce_basicConstraints,
        critical: true,
        extnValue: new OctetString(AsnConvert.serialize(new BasicConstraints({ cA: true }))),
      }),
    ]),
  });
  return { name, key: privateKey, der: signed(tbs, privateKey), keyHash: createHash('sha256').update(spki).digest() };
}

export interface LeafSpec {
  /** subjectAltName DNS names; the CN is the first unless `commonName` says otherwise. */
  names: string[];
  commonName?: string;
  subjectOrg?: string;
  /** Unique per CA. */
  serial: number;
  notBefore: Date;
  notAfter: Date;
}

/** A positive DER INTEGER's content: minimal, with a zero byte in front when the top bit is set. */
function serialBytes(serial: number): Buffer {
  let hex = serial.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  if (Number.parseInt(hex.slice(0, 2), 16) >= 0x80) hex = `00${hex}`;
  return Buffer.from(hex, 'hex');
}

function leafTbs(ca: TestCa, spec: LeafSpec, poisoned: boolean): TBSCertificate {
  const subject: [string, string][] = [];
  if (spec.subjectOrg) subject.push([ORGANIZATION, spec.subjectOrg]);
  subject.push([COMMON_NAME, spec.commonName ?? spec.names[0]!]);
  const san = new SubjectAlternativeName(spec.names.map((dNSName) => new GeneralName({ dNSName })));
  const extensions = [
    new Extension({
      extnID: id_ce_subjectAltName,
      critical: false,
      extnValue: new OctetString(AsnConvert.serialize(san)),
    }),
  ];
  if (poisoned)
    extensions.push(new Extension({ extnID: CT_POISON, critical: true, extnValue: new OctetString(ASN1_NULL) }));
  return new TBSCertificate({
    version: Version.v3,
    serialNumber: arrayBufferOf(serialBytes(spec.serial)),
    signature: new AlgorithmIdentifier({ algorithm: ECDSA_WITH_SHA256 }),
    issuer: ca.name,
    validity: new Validity({ notBefore: spec.notBefore, notAfter: spec.notAfter }),
    subject: nameOf(subject),
    subjectPublicKeyInfo: keyPair().info,
    extensions: new Extensions(extensions),
  });
}

/** A final certificate (DER) for the names, signed by the CA. */
export const issueCertificate = (ca: TestCa, spec: LeafSpec): Buffer => signed(leafTbs(ca, spec, false), ca.key);

export interface Precertificate {
  /** The CA-signed certificate with the critical CT poison extension (RFC 6962 3.1). */
  precertificate: Buffer;
  /** Its TBSCertificate with the poison removed: what a precert entry's leaf logs. */
  tbs: Buffer;
}

export function issuePrecertificate(ca: TestCa, spec: LeafSpec): Precertificate {
  const poisoned = leafTbs(ca, spec, true);
  const precertificate = signed(poisoned, ca.key);
  const tbs = AsnConvert.parse(AsnConvert.serialize(poisoned), TBSCertificate);
  tbs.extensions = new Extensions(tbs.extensions!.filter((extension) => extension.extnID !== CT_POISON));
  return { precertificate, tbs: bufferOf(AsnConvert.serialize(tbs)) };
}

const uint = (value: number, size: number) => {
  const bytes = Buffer.alloc(size);
  for (let i = size - 1, rest = value; i >= 0; i--, rest = Math.floor(rest / 256)) bytes[i] = rest % 256;
  return bytes;
};
const vector = (lengthBytes: number, body: Buffer) => Buffer.concat([uint(body.length, lengthBytes), body]);
const chainOf = (certificates: Buffer[]) =>
  vector(3, Buffer.concat(certificates.map((certificate) => vector(3, certificate))));

/** A log entry, RFC 6962 encoded. */
export interface LogEntry {
  leafInput: Buffer;
  extraData: Buffer;
}

/** MerkleTreeLeaf v1 timestamped_entry x509_entry, and an X509ChainEntry of the issuer. */
export const x509Entry = (certificate: Buffer, ca: TestCa, timestamp: number): LogEntry => ({
  leafInput: Buffer.concat([
    Buffer.from([0, 0]),
    uint(timestamp, 8),
    uint(0, 2),
    vector(3, certificate),
    vector(2, Buffer.alloc(0)),
  ]),
  extraData: chainOf([ca.der]),
});

/** MerkleTreeLeaf v1 timestamped_entry precert_entry, and a PrecertChainEntry. */
export const precertEntry = (precert: Precertificate, ca: TestCa, timestamp: number): LogEntry => ({
  leafInput: Buffer.concat([
    Buffer.from([0, 0]),
    uint(timestamp, 8),
    uint(1, 2),
    ca.keyHash,
    vector(3, precert.tbs),
    vector(2, Buffer.alloc(0)),
  ]),
  extraData: Buffer.concat([vector(3, precert.precertificate), chainOf([ca.der])]),
});

/** What the log does with one get-entries request: null answers it, a status fails it, 'hang' never answers. */
export type Fault = { status: number; headers?: Record<string, string> } | 'hang' | null;

export interface CtLogServer {
  /** The log's base URL, ending in `/`. */
  url: string;
  entries: LogEntry[];
  /** The get-entries requests answered or failed, as [start, end] asked. */
  requests: [number, number][];
  /** Applied to the next get-entries requests, one each, in order; then requests are answered. */
  faults: Fault[];
  close(): Promise<void>;
}

/**
 * An RFC 6962 log at http://127.0.0.1:<port>/logs/<name>/: get-sth gives the tree size (the
 * root hash and signature are placeholders; the collector does not audit the log), get-entries
 * answers at most `maxPerResponse` entries (logs may return fewer than asked).
 */
export async function startCtLogServer(name: string, options: { maxPerResponse: number }): Promise<CtLogServer> {
  const base = `/logs/${name}/`;
  const log: CtLogServer = { url: '', entries: [], requests: [], faults: [], close: async () => {} };
  const json = (response: import('node:http').ServerResponse, status: number, body: unknown) =>
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === `${base}ct/v1/get-sth`) {
      json(response, 200, {
        tree_size: log.entries.length,
        timestamp: Date.now(),
        sha256_root_hash: Buffer.alloc(32).toString('base64'),
        tree_head_signature: 'BAMARjBEAiA=',
      });
      return;
    }
    if (url.pathname !== `${base}ct/v1/get-entries`) {
      json(response, 404, { error_message: 'not found' });
      return;
    }
    const start = Number(url.searchParams.get('start'));
    const end = Number(url.searchParams.get('end'));
    log.requests.push([start, end]);
    const fault = log.faults.shift();
    if (fault === 'hang') return;
    if (fault) {
      response.writeHead(fault.status, { 'content-type': 'text/plain', ...fault.headers }).end('log unavailable');
      return;
    }
    if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end < start || start >= log.entries.length) {
      json(response, 400, { error_message: 'bad range' });
      return;
    }
    const last = Math.min(end, log.entries.length - 1, start + options.maxPerResponse - 1);
    json(response, 200, {
      entries: log.entries.slice(start, last + 1).map((entry) => ({
        leaf_input: entry.leafInput.toString('base64'),
        extra_data: entry.extraData.toString('base64'),
      })),
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  log.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${base}`;
  log.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return log;
}
