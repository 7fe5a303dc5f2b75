import type { StixDescription } from '../kit/source.ts';
import { equalityPattern, factLines, observables, present, str, url } from '../common/stix/stix-kit.ts';

/**
 * An app listing: the software and its store URL; a lookalike of the brand's app is an indicator
 * on that URL (docs/stix.md).
 */
export function appStoreStix(data: Record<string, unknown>): StixDescription {
  const listing = url(data.url);
  const name = str(data.name) ?? str(data.app_id) ?? 'an app';
  return {
    observables: observables(
      {
        type: 'software',
        properties: present({
          name,
          vendor: str(data.developer),
          version: str(data.version),
          x_dragnet_app_id: str(data.app_id),
        }),
      },
      listing,
    ),
    indicator:
      data.lookalike === true && listing
        ? {
            pattern: equalityPattern('url', 'value', [listing.properties.value as string]),
            types: ['malicious-activity'],
            name: `Lookalike app: ${name}`,
          }
        : undefined,
    summary: `App ${name} by ${str(data.developer) ?? 'an unknown developer'} on ${str(data.store) ?? 'a store'}`,
    text: factLines([
      ['App', name],
      ['App id', str(data.app_id)],
      ['Developer', str(data.developer)],
      ['Store', str(data.store)],
      ['Version', str(data.version)],
      ['Installs', data.installs],
      ['Matched on', str(data.matched_on)],
      ['Why', str(data.reason)],
      ['Released', str(data.released_at)],
    ]),
  };
}
