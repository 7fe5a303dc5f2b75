import { sql } from 'kysely';
import { positiveTerms, type QueryNode } from '../common/query/query-language.ts';
import { textPreview } from '../common/query/text-preview.ts';
import type { Hit } from '../kit/source.ts';

/** A messenger rule's args as its prepare makes them: the query parsed, the defaults applied. */
export interface MessengerQuery {
  tree: QueryNode;
  /** Only messages of these channels; null for every channel. */
  channelIds: number[] | null;
  uniqueOnly: boolean;
  contextChars: number;
}

/** A message with its channel's names, as search and monitoring read it. */
export interface MessageRow {
  id: number;
  message_id: number;
  channel_id: number;
  username: string | null;
  title: string;
  user_id: number | null;
  text: string;
  text_hash: string;
  date: number;
  has_media: number;
  media_type: string | null;
  file_name: string | null;
  links: string | null;
  forwarded_from: string | null;
  forwarded_from_id: string | null;
  via_bot: string | null;
  reply_to_message_id: number | null;
  edited_at: number | null;
}

export const MESSAGE_COLUMNS = sql`m.id, m.message_id, m.channel_id, c.username, c.title, m.user_id, m.text, m.text_hash, m.date,
  m.has_media, m.media_type, m.file_name, m.links, m.forwarded_from, m.forwarded_from_id, m.via_bot, m.reply_to_message_id, m.edited_at`;

const numberOrNull = (value: number | null) => (value === null ? null : Number(value));

/** What a message carries besides its text and date, as search results and rule hits show it. */
export function messageDetails(row: MessageRow) {
  return {
    has_media: Number(row.has_media) === 1,
    media_type: row.media_type,
    file_name: row.file_name,
    links: row.links ? (JSON.parse(row.links) as string[]) : null,
    forwarded_from: row.forwarded_from,
    forwarded_from_id: row.forwarded_from_id,
    via_bot: row.via_bot,
    reply_to_message_id: numberOrNull(row.reply_to_message_id),
    edited_at: row.edited_at === null ? null : new Date(Number(row.edited_at)).toISOString(),
  };
}

export function messageHit(row: MessageRow, tree: QueryNode, contextChars: number): Hit {
  return {
    key: `${row.channel_id}:${row.message_id}`,
    date: Number(row.date),
    data: {
      message_id: Number(row.message_id),
      channel_id: Number(row.channel_id),
      channel_username: row.username ?? row.title,
      user_id: numberOrNull(row.user_id),
      date: new Date(Number(row.date)).toISOString(),
      text_preview: textPreview(row.text, positiveTerms(tree), contextChars),
      text: row.text,
      text_hash: row.text_hash,
      ...messageDetails(row),
    },
  };
}

/** unique_only: identical texts count once (the newest, as hits arrive newest first). */
export function collapseIdenticalTexts(hits: Hit[]): Hit[] {
  const seen = new Set<unknown>();
  return hits.filter((hit) => !seen.has(hit.data.text_hash) && seen.add(hit.data.text_hash));
}
