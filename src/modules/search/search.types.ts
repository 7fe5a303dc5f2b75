import type { QueryNode } from '../sources/index.ts';

export interface SearchRequest {
  query: string;
  channel_ids?: number[] | null;
  context_chars?: number;
  unique_only?: boolean;
  page?: number;
  page_size?: number;
}

/** The options a search ran with, as its history entry keeps them. */
export interface SearchOptions {
  channel_ids: number[] | null;
  context_chars: number;
  unique_only: boolean;
}

/** The parsed query a history entry keeps. */
export interface StoredParse {
  tree: QueryNode;
  terms: string[];
  truncated: boolean;
}

export interface MessageItem {
  message_id: number;
  channel_id: number;
  channel_username: string | null;
  user_id: number | null;
  text_preview: string;
  date: string;
  has_media: boolean;
  media_type: string | null;
  file_name: string | null;
  links: string[] | null;
  /** A forward's origin as the export named it, and its id (`channel1234`). */
  forwarded_from: string | null;
  forwarded_from_id: string | null;
  via_bot: string | null;
  reply_to_message_id: number | null;
  edited_at: string | null;
  channel_count: number;
  channels_list: string[] | null;
}

/** A full message for exports: the preview plus the whole text. */
export interface ExportItem extends MessageItem {
  text: string;
}

/** What makes a re-read of a history entry exact: the search as it ran, below its watermark. */
export interface RecordedSearch {
  historyId: number;
  parse: StoredParse;
  options: SearchOptions;
  watermark: number;
  total: number;
  /** Where its reads must have replayed to on a replica (src/db/read-replicas.ts); null: as fresh as the primary. */
  readLsn: string | null;
}
