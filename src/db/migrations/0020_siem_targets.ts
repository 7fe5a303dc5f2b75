import type { Kysely } from 'kysely';
import { createTableWithId, type MigrationContext } from '../migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// SIEM forwarding (#26, docs/siem.md): Splunk HTTP Event Collector and syslog (RFC 5424 over
// TLS) targets an organization's rules send their hits to, besides email and webhooks. The HEC
// token is sealed (KeyRing.encryptSecret) and never returned.
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  await createTableWithId(db, engine, 'siem_targets')
    .addColumn('org_id', 'bigint', (c) => c.notNull().references('organizations.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    // 'splunk_hec' | 'syslog'
    .addColumn('kind', 'text', (c) => c.notNull())
    // splunk_hec: the collector endpoint, the sealed token and the optional event metadata
    .addColumn('url', 'text')
    .addColumn('token_sealed', 'text')
    .addColumn('hec_index', 'text')
    .addColumn('sourcetype', 'text')
    .addColumn('source', 'text')
    // syslog: host, port, message format ('json' | 'cef'), APP-NAME and facility
    .addColumn('host', 'text')
    .addColumn('port', 'integer')
    .addColumn('format', 'text')
    .addColumn('app_name', 'text')
    .addColumn('facility', 'integer')
    // both: certificate verification (on unless turned off) and a private CA to trust
    .addColumn('verify_tls', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('ca_pem', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('siem_targets_org_idx').on('siem_targets').column('org_id').execute();

  await db.schema
    .createTable('alert_rule_siem_targets')
    .addColumn('rule_id', 'bigint', (c) => c.notNull().references('alert_rules.id').onDelete('cascade'))
    .addColumn('target_id', 'bigint', (c) => c.notNull().references('siem_targets.id'))
    .addPrimaryKeyConstraint('alert_rule_siem_targets_pk', ['rule_id', 'target_id'])
    .execute();
  await db.schema
    .createIndex('alert_rule_siem_targets_target_idx')
    .on('alert_rule_siem_targets')
    .column('target_id')
    .execute();
}
