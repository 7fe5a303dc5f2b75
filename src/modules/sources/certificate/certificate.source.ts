import { sourceWithoutData } from '../source.ts';

/**
 * Certificate (id 9): certificates logged in Certificate Transparency logs (certstream
 * `certificate_update` frames) that name the watched domain.
 *
 * Hit data: common_name, all_domains, issuer (issuer O or CN), subject_org, not_before, not_after,
 * fingerprint, serial_number, log_name (source.name), update_type (X509LogEntry / PrecertLogEntry),
 * cert_index, cert_link, seen.
 */
export const certificateSource = sourceWithoutData({
  id: 9,
  name: 'certificate',
  alias: 'Certificates (CT logs)',
  description: 'Certificates appearing in Certificate Transparency logs that name the watched domain or its subdomains.',
  serviceType: 'sync',
  frequency: 'daily',
  params: [
    { name: 'domain', type: 'String', required: true, hint: 'Domain looked for in the certificate names (CN and SANs)', example: 'acme-bank.com' },
    { name: 'include_subdomains', type: 'Boolean', required: false, hint: 'Also match names under the domain, *.acme-bank.com (on by default)', example: true },
    { name: 'ignore_issuers', type: 'Array[String]', required: false, hint: 'Issuer organizations whose certificates are expected and not reported', example: ["Let's Encrypt"] },
    { name: 'include_precertificates', type: 'Boolean', required: false, hint: 'Also report precertificates (PrecertLogEntry), not only final certificates (on by default)', example: true },
  ],
  excludableFields: ['common_name', 'issuer', 'fingerprint'],
  filterableFields: ['issuer', 'subject_org', 'log_name', 'update_type'],
  sortableFields: ['seen', 'not_before', 'not_after', 'common_name'],
});
