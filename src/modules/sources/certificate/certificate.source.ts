import type { ArgError } from '../kit/args-validation.ts';
import type { SourceDefinition } from '../kit/source.ts';
import { certificateIngester } from './certificate-ingest.ts';
import { matchCertificates, nameTarget } from './certificate-match.ts';
import { certificateMigrations } from './certificate-store.ts';
import { ctLogsCollector } from './ct-logs.collector.ts';
import { loadDemoCertificates } from './demo-certificates.ts';

interface CertificateArgs {
  domain: string;
  include_subdomains?: boolean;
  ignore_issuers?: string[];
  include_precertificates?: boolean;
}

function checkCertificateArgs(args: Record<string, unknown>): ArgError[] {
  const target = nameTarget((args as unknown as CertificateArgs).domain, true);
  return typeof target === 'string' ? [{ field: 'args.domain', message: `must be a domain name such as acme-bank.com, without scheme or path (${target})`, rule: 3 }] : [];
}

/**
 * Certificate (id 9): certificates logged in Certificate Transparency logs (certstream frames,
 * the ct-logs collector reading logs directly, PEM/DER files) whose names are the watched
 * domain, under it, or look like it (certificate-match.ts). One hit per certificate, however
 * many logs carry it; docs/sources.md lists the hit fields.
 */
export const certificateSource: SourceDefinition = {
  id: 9,
  name: 'certificate',
  alias: 'Certificates (CT logs)',
  description: 'Certificates appearing in Certificate Transparency logs whose names are the watched domain, under it, or look like it.',
  serviceType: 'sync',
  frequency: 'daily',
  params: [
    { name: 'domain', type: 'String', required: true, hint: 'Domain looked for in the certificate names (CN and SANs); names containing its brand label are reported as lookalikes', example: 'acme-bank.com' },
    { name: 'include_subdomains', type: 'Boolean', required: false, hint: 'Also match names under the domain, *.acme-bank.com (on by default)', example: true },
    { name: 'ignore_issuers', type: 'Array[String]', required: false, hint: "Issuers whose certificates are expected and not reported: part of the issuer's O or CN, any case", example: ["Let's Encrypt"] },
    { name: 'include_precertificates', type: 'Boolean', required: false, hint: 'Also report precertificates (PrecertLogEntry), not only final certificates (on by default)', example: true },
  ],
  excludableFields: ['common_name', 'issuer', 'fingerprint', 'sha1_fingerprint'],
  filterableFields: ['match_type', 'issuer', 'subject_org', 'log_name', 'update_type'],
  sortableFields: ['discovered_at', 'seen', 'not_before', 'not_after', 'common_name'],
  hasData: true,
  checkArgs: checkCertificateArgs,
  match(context, rawArgs, window, limit) {
    const args = rawArgs as unknown as CertificateArgs;
    const target = nameTarget(args.domain, args.include_subdomains ?? true);
    if (typeof target === 'string') return Promise.resolve({ hits: [], total: 0 });
    return matchCertificates(context, { target, ignoreIssuers: args.ignore_issuers ?? [], includePrecertificates: args.include_precertificates ?? true }, window, limit);
  },
  migrations: certificateMigrations,
  ingesters: [certificateIngester],
  collectors: [ctLogsCollector],
  async demo(context, now) {
    const added = await loadDemoCertificates(context, now);
    return `Demo certificates: ${added} synthetic CT entries added (try certificate with domain "acme-bank.com")`;
  },
};
