import type { StixDescription } from '../kit/source.ts';
import { factLines, observables, str, url, userAccount, withoutSecrets } from '../common/stix/stix-kit.ts';

/** A channel message: its author, the links it carries, and its text in the note (docs/stix.md). */
export function messengerStix(data: Record<string, unknown>): StixDescription {
  const links = Array.isArray(data.links) ? data.links.slice(0, 20) : [];
  const channel = str(data.channel_username) ?? String(data.channel_id ?? '');
  return {
    observables: observables(
      userAccount({ account_type: 'telegram', user_id: data.user_id == null ? null : String(data.user_id) }),
      ...links.map(url),
    ),
    summary: `Message ${String(data.message_id ?? '')} in @${channel}`,
    text: [
      factLines([
        ['Channel', channel],
        ['Date', str(data.date)],
        ['Forwarded from', str(data.forwarded_from)],
        ['File', str(data.file_name)],
      ]),
      withoutSecrets(str(data.text) ?? str(data.text_preview) ?? ''),
    ].join('\n\n'),
  };
}
