import { parseJson } from '../common/ingest/ingest-kit.ts';
import { domainsOf, logIdOf, type CertificateRecord, type LogEntryRef } from './certificate-record.ts';
import { fingerprint } from './x509.ts';

/**
 * One certstream websocket frame (a line of `--format certstream`): a `certificate_update` is a
 * record, a `heartbeat` is skipped (null), anything else is rejected with the reason (a string).
 * Frame layout: docs/ingest.md "Certificates"; certstream's `fingerprint` is the SHA-1 of the
 * DER, and the DER itself (`as_der`, full-stream only) gives the SHA-256.
 */
export function parseCertstreamFrame(line: string): CertificateRecord | null | string {
  let frame: unknown;
  try {
    frame = parseJson(line);
  } catch {
    return 'not a JSON frame';
  }
  if (!isObject(frame)) return 'not a JSON object';
  if (frame.message_type === 'heartbeat') return null;
  if (frame.message_type !== 'certificate_update') return `message_type ${JSON.stringify(frame.message_type)} is not certificate_update or heartbeat`;
  const data = frame.data;
  if (!isObject(data)) return 'data is not an object';
  const entryType = data.update_type === 'X509LogEntry' ? 'x509' : data.update_type === 'PrecertLogEntry' ? 'precert' : null;
  if (!entryType) return 'data.update_type must be X509LogEntry or PrecertLogEntry';
  const leaf = data.leaf_cert;
  if (!isObject(leaf)) return 'data.leaf_cert is not an object';
  if (typeof leaf.fingerprint !== 'string' || !SHA1.test(leaf.fingerprint)) return 'data.leaf_cert.fingerprint is not a SHA-1 fingerprint (20 colon-separated hex bytes)';
  const sha1 = leaf.fingerprint.toUpperCase();
  if (!Array.isArray(leaf.all_domains) || !leaf.all_domains.every((name) => typeof name === 'string')) return 'data.leaf_cert.all_domains is not a list of names';
  let sha256: string | null = null;
  if (leaf.as_der !== undefined && leaf.as_der !== null) {
    const der = typeof leaf.as_der === 'string' ? Buffer.from(leaf.as_der, 'base64') : null;
    if (!der?.length || fingerprint('sha1', der) !== sha1) return 'data.leaf_cert.as_der is not the DER the fingerprint is of';
    sha256 = fingerprint('sha256', der);
  }
  const subject = isObject(leaf.subject) ? leaf.subject : {};
  // Newer certstream servers put the issuer beside the subject; older ones only send the chain.
  const chainIssuer = Array.isArray(data.chain) && isObject(data.chain[0]) && isObject(data.chain[0].subject) ? data.chain[0].subject : {};
  const issuer = isObject(leaf.issuer) ? leaf.issuer : chainIssuer;
  return {
    sha256,
    sha1,
    entryType,
    commonName: text(subject.CN),
    subjectOrg: text(subject.O),
    issuerOrg: text(issuer.O),
    issuerCn: text(issuer.CN),
    domains: domainsOf(text(subject.CN), leaf.all_domains as string[]),
    serialNumber: text(leaf.serial_number)?.toUpperCase() ?? null,
    notBefore: epochMs(leaf.not_before),
    notAfter: epochMs(leaf.not_after),
    seen: epochMs(data.seen),
    log: logEntryOf(data),
  };
}

const SHA1 = /^[0-9a-f]{2}(?::[0-9a-f]{2}){19}$/i;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | null => (typeof value === 'string' && value.trim() ? value.trim() : null);
/** certstream dates are epoch seconds (`seen` with a fraction). */
const epochMs = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? Math.round(value * 1000) : null);

function logEntryOf(data: Record<string, unknown>): LogEntryRef | null {
  const source = data.source;
  if (!isObject(source) || typeof source.url !== 'string' || !source.url.trim()) return null;
  const index = data.cert_index;
  if (typeof index !== 'number' || !Number.isSafeInteger(index) || index < 0) return null;
  const url = logIdOf(source.url.trim());
  return {
    name: text(source.name) ?? url,
    url,
    index,
    link: text(data.cert_link) ?? `https://${url}ct/v1/get-entries?start=${index}&end=${index}`,
  };
}
