import { parseJson } from '../common/ingest/ingest-kit.ts';
import { domainsOf, logIdOf, type CertificateRecord, type LogEntryRef } from './certificate-record.ts';
import { plausibleTime } from '../common/ingest/timestamp.ts';
import { certificateFacts, fingerprint, type CertificateFacts } from './x509.ts';

/**
 * One certstream websocket frame (a line of `--format certstream`), or null when it is nothing
 * to keep: see certstreamRecord.
 */
export function parseCertstreamFrame(
  line: string,
  warn: (reason: string) => void = () => {},
): CertificateRecord | null | string {
  let frame: unknown;
  try {
    frame = parseJson(line);
  } catch {
    return 'not a JSON frame';
  }
  return certstreamRecord(frame, warn);
}

/**
 * A certstream frame as a record: a `certificate_update` (or its `data` saved alone) is one, a
 * `heartbeat` and a `dns_entries` frame (the domains-only stream: names without a certificate)
 * are skipped (null), anything else is rejected with the reason (a string). Frame layout:
 * docs/ingest.md "Certificates". certstream's `fingerprint` is the SHA-1 of the DER; the DER
 * itself (`as_der`, full stream only) gives the SHA-256, and the issuer, subject, names, serial
 * and validity that the frame leaves out (the lite stream has no chain; some servers no issuer).
 * A not_before or seen date that cannot be true is stored as null and `warn` hears why.
 */
export function certstreamRecord(frame: unknown, warn: (reason: string) => void): CertificateRecord | null | string {
  if (!isObject(frame)) return 'not a JSON object';
  if (frame.message_type === 'heartbeat' || frame.message_type === 'dns_entries') return null;
  const unwrapped = frame.message_type === undefined && isObject(frame.leaf_cert);
  if (!unwrapped && frame.message_type !== 'certificate_update')
    return `message_type ${JSON.stringify(frame.message_type)} is not certificate_update, heartbeat or dns_entries`;
  const data = unwrapped ? frame : frame.data;
  if (!isObject(data)) return 'data is not an object';
  const leaf = data.leaf_cert;
  if (!isObject(leaf)) return 'data.leaf_cert is not an object';
  const der = typeof leaf.as_der === 'string' && leaf.as_der !== '' ? Buffer.from(leaf.as_der, 'base64') : null;
  if (leaf.as_der !== undefined && leaf.as_der !== null && !der?.length)
    return 'data.leaf_cert.as_der is not base64 DER';
  if (leaf.fingerprint !== undefined || !der) {
    if (typeof leaf.fingerprint !== 'string' || !SHA1.test(leaf.fingerprint))
      return 'data.leaf_cert.fingerprint is not a SHA-1 fingerprint (20 colon-separated hex bytes)';
    if (der && fingerprint('sha1', der) !== leaf.fingerprint.toUpperCase())
      return 'data.leaf_cert.as_der is not the DER the fingerprint is of';
  }
  if (
    leaf.all_domains !== undefined &&
    (!Array.isArray(leaf.all_domains) || !leaf.all_domains.every((name) => typeof name === 'string'))
  ) {
    return 'data.leaf_cert.all_domains is not a list of names';
  }
  const updateType = ENTRY_TYPES[String(data.update_type)];
  if (!updateType && data.update_type !== undefined) return 'data.update_type must be X509LogEntry or PrecertLogEntry';
  const facts = der ? derFacts(der) : null;
  const known = frameFacts(data, leaf);
  const entryType = updateType ?? (facts ? (facts.poisoned ? 'precert' : 'x509') : null);
  if (!entryType) return 'data.update_type must be X509LogEntry or PrecertLogEntry';
  const commonName = known.commonName ?? facts?.commonName ?? null;
  return {
    sha256: der ? fingerprint('sha256', der) : null,
    sha1: typeof leaf.fingerprint === 'string' ? leaf.fingerprint.toUpperCase() : fingerprint('sha1', der!),
    entryType,
    commonName,
    subjectOrg: known.subjectOrg ?? facts?.subjectOrg ?? null,
    issuerOrg: known.issuerOrg ?? facts?.issuerOrg ?? null,
    issuerCn: known.issuerCn ?? facts?.issuerCn ?? null,
    domains: domainsOf(commonName, (leaf.all_domains as string[] | undefined) ?? facts?.dnsNames ?? []),
    serialNumber: text(leaf.serial_number)?.toUpperCase() ?? facts?.serialNumber ?? null,
    notBefore: plausibleTime(epochMs(leaf.not_before) ?? facts?.notBefore ?? null, warn, 'not_before'),
    // Validity runs into the future: not_after is no event date.
    notAfter: epochMs(leaf.not_after) ?? facts?.notAfter ?? null,
    seen: plausibleTime(epochMs(data.seen), warn, 'seen'),
    log: logEntryOf(data),
  };
}

const ENTRY_TYPES: Record<string, CertificateRecord['entryType']> = {
  X509LogEntry: 'x509',
  PrecertLogEntry: 'precert',
};

/** The facts of the DER, or null when this decoder cannot read it. */
function derFacts(der: Buffer): CertificateFacts | null {
  try {
    return certificateFacts(der);
  } catch {
    // A frame whose own fields are whole needs no DER facts (a server may send DER this decoder refuses).
    return null;
  }
}

/** What the frame's own subject and issuer fields say. */
function frameFacts(data: Record<string, unknown>, leaf: Record<string, unknown>) {
  const subject = isObject(leaf.subject) ? leaf.subject : {};
  // Newer certstream servers put the issuer beside the subject; older ones only send the chain.
  const chainIssuer =
    Array.isArray(data.chain) && isObject(data.chain[0]) && isObject(data.chain[0].subject)
      ? data.chain[0].subject
      : {};
  const issuer = isObject(leaf.issuer) ? leaf.issuer : chainIssuer;
  return {
    commonName: text(subject.CN),
    subjectOrg: text(subject.O),
    issuerOrg: text(issuer.O),
    issuerCn: text(issuer.CN),
  };
}

const SHA1 = /^[0-9a-f]{2}(?::[0-9a-f]{2}){19}$/i;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | null => (typeof value === 'string' && value.trim() ? value.trim() : null);
/** certstream dates are epoch seconds (`seen` with a fraction). */
const epochMs = (value: unknown): number | null =>
  typeof value === 'number' && Number.isFinite(value) ? Math.round(value * 1000) : null;

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
