import type { StixDescription } from '../kit/source.ts';
import { domainName, emailAddr, factLines, observables, str, url } from '../common/stix/stix-kit.ts';

/**
 * A line of a raw leak: the term it matched as an observable and where the line is. The line
 * itself is not exported: a combo line carries a password, masked or not (docs/stix.md).
 */
export function rawLeakStix(data: Record<string, unknown>): StixDescription {
  const term = str(data.matched_term);
  const kind = str(data.term_type);
  const observable =
    kind === 'email' ? emailAddr(term) : kind === 'url' ? url(term) : kind === 'domain' ? domainName(term) : null;
  return {
    observables: observables(observable),
    summary: `${term ?? 'A term'} in line ${String(data.line_number ?? '?')} of ${str(data.leak_name) ?? 'a leak'}`,
    text: factLines([
      ['Leak file', str(data.leak_name)],
      ['File type', str(data.file_type)],
      ['Line', data.line_number],
      ['Matched term', term],
      ['Term type', kind],
      ['Line text', 'not exported (a leak line may carry a password)'],
      ['Indexed', str(data.indexed_at)],
    ]),
  };
}
