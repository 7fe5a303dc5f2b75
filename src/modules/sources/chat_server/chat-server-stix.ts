import type { StixDescription } from '../kit/source.ts';
import { factLines, observables, str, url, userAccount, withoutSecrets } from '../common/stix/stix-kit.ts';

/** A chat server message: its author, its link, and its text in the note (docs/stix.md). */
export function chatServerStix(data: Record<string, unknown>): StixDescription {
  return {
    observables: observables(
      userAccount({
        account_type: 'discord',
        user_id: str(data.author_id),
        account_login: str(data.author_name),
        is_service_account: data.is_bot === true ? true : undefined,
      }),
      url(data.url),
    ),
    summary: `Message in ${str(data.server_name) ?? 'a server'} › #${str(data.channel_name) ?? ''}`,
    text: [
      factLines([
        ['Server', str(data.server_name)],
        ['Channel', str(data.channel_name)],
        ['Author', str(data.author_name)],
        ['Date', str(data.timestamp)],
      ]),
      withoutSecrets(str(data.content) ?? ''),
    ].join('\n\n'),
  };
}
