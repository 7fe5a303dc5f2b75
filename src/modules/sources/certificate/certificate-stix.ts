import type { StixDescription, StixObservable } from '../kit/source.ts';
import { domainName, equalityPattern, factLines, observables, present, str } from '../common/stix/stix-kit.ts';

const hex = (fingerprint: unknown) => str(fingerprint)?.replace(/:/g, '').toUpperCase() ?? null;

/**
 * A certificate from a CT log: the x509-certificate and the names it covers; a certificate for a
 * lookalike name is an indicator on those names (docs/stix.md).
 */
export function certificateStix(data: Record<string, unknown>): StixDescription {
  const sha256 = hex(data.fingerprint);
  const sha1 = hex(data.sha1_fingerprint);
  const hashes = present({ 'SHA-256': sha256, 'SHA-1': sha1 });
  const names = Array.isArray(data.matched_names) ? data.matched_names : [data.common_name];
  const domains = observables(...names.map(domainName));
  const certificate: StixObservable = {
    type: 'x509-certificate',
    properties: present({
      hashes: Object.keys(hashes).length ? hashes : null,
      serial_number: str(data.serial_number),
      issuer: str(data.issuer_cn) ? `CN=${str(data.issuer_cn)}, O=${str(data.issuer) ?? ''}` : str(data.issuer),
      subject: str(data.common_name) ? `CN=${str(data.common_name)}` : null,
      validity_not_before: str(data.not_before),
      validity_not_after: str(data.not_after),
    }),
  };
  const lookalike = data.match_type === 'lookalike' && domains.length > 0;
  return {
    observables: [certificate, ...domains],
    indicator: lookalike
      ? {
          pattern: equalityPattern(
            'domain-name',
            'value',
            domains.map((domain) => domain.properties.value as string),
          ),
          types: ['malicious-activity'],
          name: `Certificate for lookalike ${str(data.common_name) ?? ''}`,
        }
      : undefined,
    summary: `Certificate for ${str(data.common_name) ?? 'a watched name'} (${str(data.match_type) ?? 'match'})`,
    text: factLines([
      ['Common name', str(data.common_name)],
      ['Names', Array.isArray(data.all_domains) ? data.all_domains : null],
      ['Match', str(data.match_type)],
      ['Issuer', str(data.issuer)],
      ['Not before', str(data.not_before)],
      ['Not after', str(data.not_after)],
      ['SHA-256', str(data.fingerprint)],
      ['CT log', str(data.log_name)],
      ['Entry', str(data.cert_link)],
      ['Seen', str(data.seen)],
    ]),
  };
}
