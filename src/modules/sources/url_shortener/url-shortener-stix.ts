import type { StixDescription } from '../kit/source.ts';
import { domainName, factLines, observables, str, url } from '../common/stix/stix-kit.ts';

/**
 * A short link to a watched domain: the short URL, its target and the target's host. Not an
 * indicator: the target is the watched organization's own site as often as not (docs/stix.md).
 */
export function urlShortenerStix(data: Record<string, unknown>): StixDescription {
  return {
    observables: observables(url(data.short_url), url(data.target_url), domainName(data.target_host)),
    summary: `${str(data.short_url) ?? 'A short link'} → ${str(data.target_url) ?? ''}`,
    text: factLines([
      ['Short link', str(data.short_url)],
      ['Service', str(data.service)],
      ['Target', str(data.target_url)],
      ['Crawled', str(data.crawled_at)],
    ]),
  };
}
