import type { StixDescription } from '../kit/source.ts';
import { domainName, equalityPattern, factLines, ipAddr, observables, str } from '../common/stix/stix-kit.ts';

/** A lookalike domain: an indicator on the domain, which resolves to its addresses (docs/stix.md). */
export function phishingStix(data: Record<string, unknown>): StixDescription {
  const domain = domainName(data.domain);
  const addresses = observables(ipAddr(data.ip), ipAddr(data.ipv6));
  const name = str(data.domain) ?? '';
  if (domain && addresses.length) domain.refs = { resolves_to_refs: addresses.map((_, index) => index + 1) };
  return {
    observables: observables(domain, ...addresses),
    indicator: domain
      ? {
          pattern: equalityPattern('domain-name', 'value', [domain.properties.value as string]),
          types: ['malicious-activity'],
          name: `Lookalike of ${str(data.watched) ?? 'a watched domain'}: ${name}`,
        }
      : undefined,
    summary: `Lookalike domain ${name} of ${str(data.watched) ?? ''}`,
    text: factLines([
      ['Domain', name],
      ['Unicode', str(data.unicode)],
      ['Watched domain', str(data.watched)],
      ['Fuzzer', str(data.fuzzer)],
      ['Score', data.score],
      ['Registrar', str(data.registrar)],
      ['IP', str(data.ip)],
      ['IPv6', str(data.ipv6)],
      ['MX', Array.isArray(data.mx) ? data.mx : null],
      ['Country', str(data.country)],
      ['Registered', str(data.registered_at)],
      ['First seen', str(data.first_seen)],
    ]),
  };
}
