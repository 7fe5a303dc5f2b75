import { slices, writeRows } from '../../../db/bulk-insert.ts';
import type { Generated } from 'kysely';
import { parseDomainName } from '../common/domains/domain-name.ts';
import { recordObservedDomains } from '../common/domains/observed-domains.ts';
import type { SourceContext } from '../kit/source.ts';
import type { CertificateRecord } from './certificate-record.ts';
import * as m0001 from './migrations/0001_certificates.ts';

/** The table of migration certificate/0001_certificates. */
export interface CertificateTable {
  id: Generated<number>;
  sha256: string | null;
  sha1: string;
  entry_type: string;
  common_name: string | null;
  subject_org: string | null;
  issuer_org: string | null;
  issuer_cn: string | null;
  /** Space-separated lower-case names. */
  domains: string;
  serial_number: string | null;
  not_before: number | null;
  not_after: number | null;
  seen: number | null;
  log_name: string | null;
  log_url: string | null;
  entry_index: number | null;
  cert_link: string | null;
  discovered_at: number;
}

// A type alias, not an interface: withTables needs an index-signature-compatible type.
export type CertificateTables = { certificates: CertificateTable };

export const certificateMigrations = { 'certificate/0001_certificates': m0001 };

export const certificateDb = (context: SourceContext) => context.db.withTables<CertificateTables>();

// Rows per INSERT: 17 columns × 1000 stays under SQLite's 32,766 bound variables.
const ROWS_PER_STATEMENT = 1000;

const rowOf = (record: CertificateRecord, discoveredAt: number): Omit<CertificateTable, 'id'> => ({
  sha256: record.sha256,
  sha1: record.sha1,
  entry_type: record.entryType,
  common_name: record.commonName,
  subject_org: record.subjectOrg,
  issuer_org: record.issuerOrg,
  issuer_cn: record.issuerCn,
  domains: record.domains.join(' '),
  serial_number: record.serialNumber,
  not_before: record.notBefore,
  not_after: record.notAfter,
  seen: record.seen,
  log_name: record.log?.name ?? null,
  log_url: record.log?.url ?? null,
  entry_index: record.log?.index ?? null,
  cert_link: record.log?.link ?? null,
  discovered_at: discoveredAt,
});

/** The registrable domains a batch of certificates names (acme-bank-login.com for www.acme-bank-login.com). */
function registrableDomains(records: CertificateRecord[]): string[] {
  const found = new Set<string>();
  for (const record of records) {
    for (const name of record.domains) {
      const parsed = parseDomainName(name);
      if (typeof parsed !== 'string') found.add(parsed.registrable);
    }
  }
  return [...found];
}

/**
 * Stores certificates, dated `discoveredAt` (context.clock at ingest), in one transaction per
 * call; a certificate already stored (same SHA-256 or SHA-1, or the same log entry) is a
 * duplicate. The registrable domains the batch names then go to the phishing source's observed
 * domains (origin `certificate`), duplicates included: that call is idempotent, and a batch
 * stored just before a crash still reaches phishing when its input is read again.
 */
export async function writeCertificates(
  context: SourceContext,
  records: CertificateRecord[],
  discoveredAt: number,
): Promise<{ added: number; duplicates: number }> {
  if (records.length === 0) return { added: 0, duplicates: 0 };
  const added = await writeRows(certificateDb(context), context.engine, {
    table: 'certificates',
    rows: records.map((record) => rowOf(record, discoveredAt)),
    // Any of the three unique keys makes the row a duplicate.
    conflict: 'any',
    statements: slices(ROWS_PER_STATEMENT),
  });
  const domains = registrableDomains(records);
  if (domains.length)
    await recordObservedDomains(
      context,
      domains.map((domain) => ({ domain, origin: 'certificate' as const })),
    );
  return { added, duplicates: records.length - added };
}
