import type { StixDescription } from '../kit/source.ts';
import { domainName, factLines, observables, str, url } from '../common/stix/stix-kit.ts';

/** A leak-site post: the victim's domain, the post's URL, and the post in the note (docs/stix.md). */
export function ransomwareStix(data: Record<string, unknown>): StixDescription {
  return {
    observables: observables(domainName(data.website), url(data.post_url), url(data.permalink)),
    summary: `${str(data.group) ?? 'A ransomware group'} lists ${str(data.victim) ?? 'a victim'}`,
    text: factLines([
      ['Group', str(data.group)],
      ['Victim', str(data.victim)],
      ['Website', str(data.website)],
      ['Country', str(data.country)],
      ['Activity', str(data.activity)],
      ['Published', str(data.published_at)],
      ['Post', str(data.post_url)],
      ['Description', str(data.description)],
    ]),
  };
}
