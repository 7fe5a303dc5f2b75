import { Type } from '@sinclair/typebox';
import { defineSource } from '../kit/source.ts';
import { certificateIngester } from './certificate-ingest.ts';
import { matchCertificates, nameTarget } from './certificate-match.ts';
import { certificateMigrations } from './certificate-store.ts';
import { ctLogsCollector } from './ct-logs.collector.ts';
import { loadDemoCertificates } from './demo-certificates.ts';
import { newestRecord } from '../kit/newest-record.ts';
import { certificateStix } from './certificate-stix.ts';

/**
 * Certificate (id 9): certificates logged in Certificate Transparency logs (certstream frames,
 * the ct-logs collector reading logs directly, PEM/DER files) whose names are the watched
 * domain, under it, or look like it (certificate-match.ts). One hit per certificate, however
 * many logs carry it; docs/sources.md lists the hit fields.
 */
export const certificateSource = defineSource({
  stix: certificateStix,
  id: 9,
  name: 'certificate',
  alias: 'Certificates (CT logs)',
  description:
    'Certificates appearing in Certificate Transparency logs whose names are the watched domain, under it, or look like it.',
  serviceType: 'sync',
  frequency: 'daily',
  args: Type.Object({
    domain: Type.String({
      description:
        'Domain looked for in the certificate names (CN and SANs); names containing its brand label are reported as lookalikes',
      examples: ['acme-bank.com'],
    }),
    include_subdomains: Type.Optional(
      Type.Boolean({
        description: 'Also match names under the domain, *.acme-bank.com (on by default)',
        examples: [true],
      }),
    ),
    ignore_issuers: Type.Optional(
      Type.Array(Type.String(), {
        description: "Issuers whose certificates are expected and not reported: part of the issuer's O or CN, any case",
        examples: [["Let's Encrypt"]],
      }),
    ),
    include_precertificates: Type.Optional(
      Type.Boolean({
        description: 'Also report precertificates (PrecertLogEntry), not only final certificates (on by default)',
        examples: [true],
      }),
    ),
  }),
  excludableFields: ['common_name', 'issuer', 'fingerprint', 'sha1_fingerprint'],
  filterableFields: ['match_type', 'issuer', 'subject_org', 'log_name', 'update_type'],
  sortableFields: ['discovered_at', 'seen', 'not_before', 'not_after', 'common_name'],
  hasData: true,
  newestRecordAt: newestRecord('certificates', 'discovered_at'),
  prepare(args) {
    const target = nameTarget(args.domain, args.include_subdomains ?? true);
    if (typeof target === 'string')
      return {
        errors: [
          {
            field: 'args.domain',
            message: `must be a domain name such as acme-bank.com, without scheme or path (${target})`,
            rule: 3,
          },
        ],
      };
    return {
      value: {
        target,
        ignoreIssuers: args.ignore_issuers ?? [],
        includePrecertificates: args.include_precertificates ?? true,
      },
    };
  },
  match: matchCertificates,
  migrations: certificateMigrations,
  ingesters: [certificateIngester],
  collectors: [ctLogsCollector],
  async demo(context, now) {
    const added = await loadDemoCertificates(context, now);
    return `Demo certificates: ${added} synthetic CT entries added (try certificate with domain "acme-bank.com")`;
  },
});
