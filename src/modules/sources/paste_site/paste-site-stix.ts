import type { StixDescription } from '../kit/source.ts';
import { factLines, observables, str, url, userAccount, withoutSecrets } from '../common/stix/stix-kit.ts';

/** A paste: its URL, its author when named, and its text in the note, passwords cut (docs/stix.md). */
export function pasteSiteStix(data: Record<string, unknown>): StixDescription {
  return {
    observables: observables(
      url(data.url),
      userAccount({ account_type: str(data.site), account_login: str(data.user) }),
    ),
    summary: `Paste ${str(data.paste_key) ?? ''} on ${str(data.site) ?? 'a paste site'}: ${str(data.title) ?? 'untitled'}`,
    text: [
      factLines([
        ['Site', str(data.site)],
        ['Title', str(data.title)],
        ['Syntax', str(data.syntax)],
        ['Posted', str(data.posted_at)],
      ]),
      withoutSecrets(str(data.snippet) ?? ''),
    ].join('\n\n'),
  };
}
