import { Type } from '@sinclair/typebox';
import { IdInteger, MAX_PAGE, Nullable } from '../../http/schemas.ts';
import { exportFormats } from './search-export.ts';
import { SEARCH_LIMITS } from './search-limits.ts';

export const SearchBody = Type.Object(
  {
    query: Type.String({ maxLength: 10_000, description: 'Boolean query: terms, "phrases", AND, OR, NOT, -term, ( )' }),
    channel_ids: Type.Optional(
      Nullable(
        Type.Array(IdInteger(), {
          maxItems: SEARCH_LIMITS.maxChannelIds,
          description: 'Restrict to these channels; null or omitted: all',
        }),
      ),
    ),
    context_chars: Type.Optional(
      Type.Integer({
        minimum: SEARCH_LIMITS.minContextChars,
        maximum: SEARCH_LIMITS.maxContextChars,
        default: SEARCH_LIMITS.defaultContextChars,
      }),
    ),
    unique_only: Type.Optional(
      Type.Boolean({ default: false, description: 'Collapse identical texts across channels' }),
    ),
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 })),
    page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: SEARCH_LIMITS.maxPageSize, default: 10 })),
  },
  { additionalProperties: false },
);

export const MessageItem = Type.Object({
  message_id: Type.Integer(),
  channel_id: Type.Integer(),
  channel_username: Nullable(Type.String()),
  user_id: Nullable(Type.Integer()),
  text_preview: Type.String(),
  date: Type.String({ format: 'date-time' }),
  has_media: Type.Boolean(),
  media_type: Nullable(Type.String()),
  file_name: Nullable(Type.String()),
  links: Nullable(Type.Array(Type.String())),
  forwarded_from: Nullable(
    Type.String({
      description: "A forwarded message's origin (a channel's title, a person's name), as the export named it",
    }),
  ),
  forwarded_from_id: Nullable(
    Type.String({ description: "The origin's id as the export wrote it (channel1234, user42)" }),
  ),
  via_bot: Nullable(Type.String()),
  reply_to_message_id: Nullable(Type.Integer()),
  edited_at: Nullable(Type.String({ format: 'date-time' })),
  channel_count: Type.Integer(),
  channels_list: Nullable(Type.Array(Type.String())),
});

const QueryNodeSchema = Type.Recursive(
  (Self) =>
    Type.Object({
      type: Type.String({ description: 'term, and, or, not' }),
      value: Type.Optional(Type.String()),
      phrase: Type.Optional(Type.Boolean()),
      position: Type.Optional(Type.Integer()),
      children: Type.Optional(Type.Array(Self)),
      child: Type.Optional(Self),
    }),
  { $id: 'QueryNode' },
);

export const SearchResponse = Type.Object({
  results: Type.Array(MessageItem),
  total: Type.Integer(),
  channels_matched: Type.Integer(),
  page: Type.Integer(),
  page_size: Type.Integer(),
  total_pages: Type.Integer(),
  query_info: Type.Object({
    query: Type.String(),
    parsed: QueryNodeSchema,
    normalized: Type.String({ description: 'Canonical form of the parsed query' }),
    terms: Type.Array(Type.String(), { description: 'Normalized (folded, distinct) terms' }),
    truncated: Type.Boolean(),
  }),
  search_history_id: Type.Integer(),
  warning: Nullable(Type.String()),
  follow_up_token: Type.String({ description: 'Start a messenger monitoring rule from this search' }),
});

const pagination = {
  total: Type.Integer(),
  page: Type.Integer(),
  page_size: Type.Integer(),
  total_pages: Type.Integer(),
};

export const Paging = (defaultSize: number, maxSize: number) => ({
  page: Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 }),
  page_size: Type.Integer({ minimum: 1, maximum: maxSize, default: defaultSize }),
});

export const ChannelQuery = Type.Object({
  ...Paging(100, 500),
  search: Type.Optional(Type.String({ maxLength: 200, description: 'Case-insensitive part of the title or username' })),
  category_id: Type.Optional(IdInteger()),
  is_active: Type.Optional(Type.Boolean()),
});

export const ChannelList = Type.Object({
  items: Type.Array(
    Type.Object({
      id: Type.Integer(),
      platform: Type.String(),
      platform_id: Nullable(Type.String()),
      username: Nullable(Type.String()),
      title: Type.String(),
      category_id: Nullable(Type.Integer()),
      category_name: Nullable(Type.String()),
      is_active: Type.Boolean(),
      last_scraped_at: Nullable(Type.String({ format: 'date-time' })),
      total_messages_scraped: Type.Integer(),
    }),
  ),
  ...pagination,
});

export const CategoryList = Type.Object({
  items: Type.Array(Type.Object({ id: Type.Integer(), name: Type.String(), channel_count: Type.Integer() })),
  ...pagination,
});

export const HistoryList = Type.Object({
  items: Type.Array(
    Type.Object({
      id: Type.Integer(),
      query: Type.String(),
      parsed_query: Type.String(),
      total_matches: Type.Integer(),
      channels_matched: Type.Integer(),
      searched_at: Type.String({ format: 'date-time' }),
      channel_ids: Nullable(Type.Array(Type.Integer())),
      unique_only: Type.Boolean(),
      context_chars: Type.Integer(),
      mine: Type.Boolean({ description: 'Made by the caller, who may delete it' }),
    }),
  ),
  ...pagination,
});

export const HistoryParams = Type.Object({ history_id: IdInteger() });

export const ExportQuery = Type.Object({
  format: Type.Union(
    exportFormats.map((f) => Type.Literal(f)),
    { default: 'csv' },
  ),
});
