import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { Engine } from '../../db/store.ts';
import type { Clock } from '../../lib/clock.ts';
import { AppError, notFound, validationError } from '../../lib/errors.ts';
import type { ChannelRepository } from './channel.repository.ts';
import type { FollowUpTokens } from './follow-up-token.ts';
import { expectedIndexShare, predicateCompilers } from './message-search.sql.ts';
import {
  formatQuery,
  MIN_INDEXED_TERM_LENGTH,
  parseQuery,
  positiveTerms,
  QuerySyntaxError,
  type QueryNode,
} from './query-language.ts';
import type { SearchRepository, SnapshotRow } from './search.repository.ts';
import { textPreview } from './text-preview.ts';
import type { TrigramStats } from './trigram-stats.ts';

/** docs/api.md "Messenger search": the limits the spec leaves open. */
export const SEARCH_LIMITS = {
  maxPageSize: 100,
  defaultContextChars: 500,
  minContextChars: 10,
  maxContextChars: 5000,
  maxChannelIds: 500,
  /** More matches than this earn a "broad query" warning. */
  broadMatchThreshold: 10_000,
  /** History keeps the ranked ids of at most this many newest matches. */
  snapshotCap: 100_000,
} as const;

export interface SearchRequest {
  query: string;
  channel_ids?: number[] | null;
  context_chars?: number;
  unique_only?: boolean;
  page?: number;
  page_size?: number;
}

interface SearchOptions {
  channel_ids: number[] | null;
  context_chars: number;
  unique_only: boolean;
}

interface StoredParse {
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
  channel_count: number;
  channels_list: string[] | null;
}

/** A full message for exports: the preview plus the whole text. */
export interface ExportItem extends MessageItem {
  text: string;
}

export function createSearchService(deps: {
  db: Kysely<Database>;
  engine: Engine;
  searches: SearchRepository;
  channels: ChannelRepository;
  followUps: FollowUpTokens;
  trigrams: TrigramStats;
  clock: Clock;
}) {
  const { db, searches, channels, followUps, trigrams, clock } = deps;
  const compile = predicateCompilers[deps.engine];

  function parseOrReject(query: string) {
    try {
      return parseQuery(query);
    } catch (error) {
      if (error instanceof QuerySyntaxError) {
        throw new AppError('validation_failed', `query: ${error.message}`, {
          fields: [{ field: 'query', message: error.message }],
          extra: { position: error.position },
        });
      }
      throw error;
    }
  }

  /** The requested channels, deduplicated, and how many messages they hold together. */
  async function checkedChannels(ids: number[] | null | undefined): Promise<{ ids: number[]; messages: number } | null> {
    if (!ids || ids.length === 0) return null;
    const unique = [...new Set(ids)];
    if (unique.length > SEARCH_LIMITS.maxChannelIds) {
      throw validationError('channel_ids', `at most ${SEARCH_LIMITS.maxChannelIds} channels`);
    }
    const known = await channels.messageCounts(unique);
    const unknown = unique.filter((id) => !known.has(id));
    if (unknown.length) throw validationError('channel_ids', `unknown channel ids: ${unknown.join(', ')}`);
    return { ids: unique, messages: [...known.values()].reduce((sum, n) => sum + n, 0) };
  }

  function warningFor(tree: QueryNode, truncated: boolean, total: number): string | null {
    const notes: string[] = [];
    if (truncated) notes.push('query truncated to its first terms (at most 64 terms and 1000 characters)');
    const short = positiveTerms(tree).filter((t) => [...t].length < MIN_INDEXED_TERM_LENGTH);
    const positives = positiveTerms(tree);
    if (positives.length === 0) notes.push('broad query: it only excludes terms, so it matches almost every message');
    if (short.length) {
      notes.push(`broad query: terms shorter than ${MIN_INDEXED_TERM_LENGTH} characters (${short.map((t) => JSON.stringify(t)).join(', ')}) match as substrings almost anywhere`);
    }
    if (total > SEARCH_LIMITS.broadMatchThreshold) {
      notes.push(`broad query: ${total} matches (more than ${SEARCH_LIMITS.broadMatchThreshold}); add terms to narrow it`);
    }
    return notes.length ? notes.join('; ') : null;
  }

  async function toItems(rows: SnapshotRow[], parse: StoredParse, options: SearchOptions, watermark: number): Promise<ExportItem[]> {
    const previewTerms = positiveTerms(parse.tree);
    const channelLists = options.unique_only
      ? await searches.channelsOfTexts([...new Set(rows.map((r) => r.text_hash))], watermark, options.channel_ids ?? undefined)
      : null;
    return rows.map((row) => {
      const ownChannel = row.username ?? row.title;
      const list = channelLists?.get(row.text_hash) ?? [ownChannel];
      return {
        message_id: Number(row.message_id),
        channel_id: Number(row.channel_id),
        channel_username: row.username,
        user_id: row.user_id === null ? null : Number(row.user_id),
        text_preview: textPreview(row.text, previewTerms, options.context_chars),
        text: row.text,
        date: new Date(Number(row.date)).toISOString(),
        has_media: Number(row.has_media) === 1,
        media_type: row.media_type,
        file_name: row.file_name,
        links: row.links ? (JSON.parse(row.links) as string[]) : null,
        channel_count: list.length,
        channels_list: list,
      };
    });
  }

  const pageCount = (total: number, pageSize: number) => Math.ceil(total / pageSize);

  async function requireHistory(orgId: number, historyId: number) {
    const row = await db
      .selectFrom('search_history')
      .selectAll()
      .where('org_id', '=', orgId)
      .where('id', '=', historyId)
      .executeTakeFirst();
    if (!row) throw notFound('search history entry');
    return {
      row,
      parse: JSON.parse(row.parsed_query) as StoredParse & { normalized: string },
      options: JSON.parse(row.options) as SearchOptions,
    };
  }

  const queryInfo = (query: string, parse: StoredParse & { normalized: string }) => ({
    query,
    parsed: parse.tree,
    normalized: parse.normalized,
    terms: parse.terms,
    truncated: parse.truncated,
  });

  /** One page of a recorded search, read from its snapshot. */
  async function readPage(orgId: number, historyId: number, page: number, pageSize: number) {
    const { row, parse, options } = await requireHistory(orgId, historyId);
    const from = (page - 1) * pageSize + 1;
    const rows = from > Number(row.snapshot_count) ? [] : await searches.readSnapshot(historyId, from, from + pageSize - 1);
    const results = (await toItems(rows, parse, options, Number(row.watermark_message_id))).map(({ text: _text, ...item }) => item);
    return {
      results,
      total: Number(row.total_matches),
      channels_matched: Number(row.channels_matched),
      page,
      page_size: pageSize,
      total_pages: pageCount(Number(row.total_matches), pageSize),
      query_info: queryInfo(row.query, parse),
      search_history_id: historyId,
      warning: warningFor(parse.tree, parse.truncated, Number(row.total_matches)),
      follow_up_token: await followUps.issue(orgId, historyId, {
        query: row.query,
        ...(options.channel_ids ? { channel_ids: options.channel_ids } : {}),
        unique_only: options.unique_only,
        context_chars: options.context_chars,
      }),
    };
  }

  return {
    async search(context: { orgId: number; userId: number }, request: SearchRequest) {
      const parsed = parseOrReject(request.query);
      const channelFilter = await checkedChannels(request.channel_ids);
      const options: SearchOptions = {
        channel_ids: channelFilter?.ids ?? null,
        context_chars: request.context_chars ?? SEARCH_LIMITS.defaultContextChars,
        unique_only: request.unique_only ?? false,
      };
      const page = request.page ?? 1;
      const pageSize = request.page_size ?? 10;
      const stored = { tree: parsed.tree, terms: parsed.terms, truncated: parsed.truncated, normalized: formatQuery(parsed.tree) };

      const watermark = await searches.maxMessageId();
      const { rarity, messages } = await trigrams.estimate(watermark);
      // When the chosen channels hold fewer messages than the index would return, reading
      // those channels' messages directly (through the channel index) is the cheaper plan.
      const withoutIndex = channelFilter !== null && channelFilter.messages <= expectedIndexShare(deps.engine, parsed.tree, rarity) * messages;
      const filter = {
        predicate: compile(parsed.tree, { rarity, withoutIndex }),
        channelIds: options.channel_ids ?? undefined,
        maxMessageId: watermark,
      };
      // The history row and its snapshot are written together: a failed search leaves neither.
      const historyId = await db.transaction().execute(async (tx) => {
        const counts = await searches.collectHits(tx, filter, options.unique_only);
        const total = options.unique_only ? counts.groups : counts.total;
        const inserted = await tx
          .insertInto('search_history')
          .values({
            org_id: context.orgId,
            user_id: context.userId,
            query: parsed.query,
            parsed_query: JSON.stringify(stored),
            options: JSON.stringify(options),
            total_matches: total,
            channels_matched: counts.channels,
            snapshot_count: Math.min(total, SEARCH_LIMITS.snapshotCap),
            watermark_message_id: watermark,
            searched_at: clock.now().getTime(),
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        const id = Number(inserted.id);
        await searches.storeSnapshot(tx, id, { uniqueOnly: options.unique_only, cap: SEARCH_LIMITS.snapshotCap });
        return id;
      });
      return readPage(context.orgId, historyId, page, pageSize);
    },

    readPage,

    async listHistory(orgId: number, page: number, pageSize: number) {
      const base = db.selectFrom('search_history').where('org_id', '=', orgId);
      const { total } = await base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
      const rows = await base
        .selectAll()
        .orderBy('searched_at', 'desc')
        .orderBy('id', 'desc')
        .offset((page - 1) * pageSize)
        .limit(pageSize)
        .execute();
      return {
        items: rows.map((row) => {
          const parse = JSON.parse(row.parsed_query) as { normalized: string };
          const options = JSON.parse(row.options) as SearchOptions;
          return {
            id: Number(row.id),
            query: row.query,
            parsed_query: parse.normalized,
            total_matches: Number(row.total_matches),
            channels_matched: Number(row.channels_matched),
            searched_at: new Date(Number(row.searched_at)).toISOString(),
            channel_ids: options.channel_ids,
            unique_only: options.unique_only,
            context_chars: options.context_chars,
          };
        }),
        total: Number(total),
        page,
        page_size: pageSize,
        total_pages: pageCount(Number(total), pageSize),
      };
    },

    /** Every stored result of a recorded search, full text included, for exports. */
    async exportRows(orgId: number, historyId: number, limit: number) {
      const { row, parse, options } = await requireHistory(orgId, historyId);
      const rows = await searches.readSnapshot(historyId, 1, limit);
      return {
        history: {
          id: historyId,
          query: row.query,
          parsed_query: parse.normalized,
          total_matches: Number(row.total_matches),
          channels_matched: Number(row.channels_matched),
          searched_at: new Date(Number(row.searched_at)).toISOString(),
        },
        items: await toItems(rows, parse, options, Number(row.watermark_message_id)),
      };
    },
  };
}

export type SearchService = ReturnType<typeof createSearchService>;
