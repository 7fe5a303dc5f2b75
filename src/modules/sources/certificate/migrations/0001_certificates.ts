import type { Kysely } from 'kysely';
import { createTableWithId, type MigrationContext } from '../../../../db/migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// certificates: one row per certificate or precertificate seen in a Certificate Transparency log
// (certstream frames, the ct-logs collector, PEM/DER files), stored once however many logs carry
// it. A certificate is known by its SHA-256 (of the DER certificate, or of the precertificate a
// precert entry was made from) and its SHA-1 (all a certstream frame without `as_der` gives);
// either already stored makes it a duplicate. (log_url, entry_index) is the log entry it was
// first stored from, so a log entry read twice adds nothing either.
// - domains: the CN and subjectAltName DNS names, lower case, space-separated (a rule's LIKE
//   prefilter reads it; the matcher classifies each name).
// - issuer: the issuer's O and CN, both kept because ignore_issuers may name either.
// - seen: when the log accepted the entry (RFC 6962 timestamp) or certstream saw it;
//   discovered_at: when Dragnet stored it (the hit's date).
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  await createTableWithId(db, engine, 'certificates')
    .addColumn('sha256', 'text', (c) => c.unique())
    .addColumn('sha1', 'text', (c) => c.notNull().unique())
    .addColumn('entry_type', 'text', (c) => c.notNull())
    .addColumn('common_name', 'text')
    .addColumn('subject_org', 'text')
    .addColumn('issuer_org', 'text')
    .addColumn('issuer_cn', 'text')
    .addColumn('domains', 'text', (c) => c.notNull())
    .addColumn('serial_number', 'text')
    .addColumn('not_before', 'bigint')
    .addColumn('not_after', 'bigint')
    .addColumn('seen', 'bigint')
    .addColumn('log_name', 'text')
    .addColumn('log_url', 'text')
    .addColumn('entry_index', 'bigint')
    .addColumn('cert_link', 'text')
    .addColumn('discovered_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('certificates_log_entry_idx')
    .on('certificates')
    .columns(['log_url', 'entry_index'])
    .unique()
    .execute();
  // A rule reads its window newest first.
  await db.schema
    .createIndex('certificates_discovered_idx')
    .on('certificates')
    .columns(['discovered_at', 'id'])
    .execute();
}
