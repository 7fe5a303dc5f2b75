import type { StixDescription } from '../kit/source.ts';
import { factLines, observables, str, url, userAccount, withoutSecrets } from '../common/stix/stix-kit.ts';

/** A forum post: its author's account on the forum, its URL, and its text in the note (docs/stix.md). */
export function hackerForumStix(data: Record<string, unknown>): StixDescription {
  return {
    observables: observables(
      userAccount({ account_type: str(data.forum), account_login: str(data.author) }),
      url(data.url),
    ),
    summary: `${str(data.forum) ?? 'Forum'}: ${str(data.title) ?? str(data.thread_title) ?? 'a post'}`,
    text: [
      factLines([
        ['Forum', str(data.forum)],
        ['Section', str(data.section)],
        ['Thread', str(data.thread_title)],
        ['Author', str(data.author)],
        ['Posted', str(data.posted_at)],
      ]),
      withoutSecrets(str(data.content) ?? ''),
    ].join('\n\n'),
  };
}
