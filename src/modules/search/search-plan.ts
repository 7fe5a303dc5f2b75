import type { Engine } from '../../db/store.ts';
import { AppError, validationError } from '../../lib/errors.ts';
import type { ChannelRepository } from './channel.repository.ts';
import type { MatchQuery } from './match-source.ts';
import {
  matchCompilers,
  MIN_INDEXED_TERM_LENGTH,
  parseQuery,
  positiveTerms,
  QuerySyntaxError,
  type QueryNode,
  type TrigramStats,
  type WordNarrowing,
  countingWords,
} from '../sources/index.ts';
import { SEARCH_LIMITS } from './search-limits.ts';

interface ChannelFilter {
  ids: number[];
  /** Messages in those channels (all of them, not only up to a watermark: a cost estimate). */
  messages: number;
}

/** The query parsed, its syntax errors answered 400 naming the field and where. */
export function parseSearchQuery(query: string) {
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

/** Why a search may cost more or find more than its author meant, or null. */
export function searchWarning(tree: QueryNode, truncated: boolean, total: number): string | null {
  const notes: string[] = [];
  if (truncated) notes.push('query truncated to its first terms (at most 64 terms and 1000 characters)');
  const short = positiveTerms(tree).filter((t) => [...t].length < MIN_INDEXED_TERM_LENGTH);
  const positives = positiveTerms(tree);
  if (positives.length === 0) notes.push('broad query: it only excludes terms, so it matches almost every message');
  if (short.length) {
    notes.push(
      `broad query: terms shorter than ${MIN_INDEXED_TERM_LENGTH} characters (${short.map((t) => JSON.stringify(t)).join(', ')}) match as substrings almost anywhere`,
    );
  }
  if (total > SEARCH_LIMITS.broadMatchThreshold) {
    notes.push(
      `broad query: ${total} matches (more than ${SEARCH_LIMITS.broadMatchThreshold}); add terms to narrow it`,
    );
  }
  return notes.length ? notes.join('; ') : null;
}

/** PostgreSQL's word index narrowing a query (word-index.ts), or null when it cannot. */
export type WordLookup = (tree: QueryNode) => Promise<WordNarrowing | null>;

/** Turns a parsed query and its channels into the query the store runs. */
export function createSearchPlanner(deps: {
  engine: Engine;
  channels: ChannelRepository;
  trigrams: TrigramStats;
  words?: WordLookup;
}) {
  const { channels, trigrams } = deps;
  const compile = matchCompilers[deps.engine];

  /** PostgreSQL's word-index narrowing of a query, looked up beside a search's other reads. */
  const overWords = (tree: QueryNode): Promise<WordNarrowing | null> =>
    deps.words ? deps.words(tree) : Promise.resolve(null);

  /** Channels to search in and how many messages they hold together. */
  async function channelScope(ids: number[]) {
    const known = await channels.messageCounts(ids);
    return { ids, known, messages: [...known.values()].reduce((sum, n) => sum + n, 0) };
  }

  return {
    channelScope,
    overWords,

    /** The requested channels, deduplicated and checked. */
    async checkedChannels(ids: number[] | null | undefined): Promise<ChannelFilter | null> {
      if (!ids || ids.length === 0) return null;
      const unique = [...new Set(ids)];
      if (unique.length > SEARCH_LIMITS.maxChannelIds) {
        throw validationError('channel_ids', `at most ${SEARCH_LIMITS.maxChannelIds} channels`);
      }
      const scope = await channelScope(unique);
      const unknown = unique.filter((id) => !scope.known.has(id));
      if (unknown.length) throw validationError('channel_ids', `unknown channel ids: ${unknown.join(', ')}`);
      return scope;
    },

    /**
     * The search as the store runs it, and how many messages it covers. When the chosen channels
     * hold fewer messages than the index would return, reading those channels' messages directly
     * (through the channel index) is the cheaper plan. `words`, the query over the word index,
     * may be looked up beforehand (`overWords`), beside the other reads of a search.
     */
    async matchQuery(
      tree: QueryNode,
      channelFilter: ChannelFilter | null,
      watermark: number,
      words: Promise<WordNarrowing | null> = overWords(tree),
    ) {
      const { rarity, messages } = await trigrams.estimate(watermark);
      const narrowing = await words;
      let match = compile(tree, { rarity, words: narrowing });
      const channelsFirst = channelFilter !== null && channelFilter.messages <= match.share * messages;
      if (channelsFirst) match = compile(tree, { rarity, withoutIndex: true });
      const query: MatchQuery = {
        match,
        channelIds: channelFilter?.ids,
        channelMessages: channelFilter?.messages,
        channelsFirst,
        maxMessageId: watermark,
        // A count reads the word index only where that beats checking the text (a broad term in
        // many words is counted in chunks, or from the text: docs/architecture.md "Search").
        words: (narrowing && countingWords(narrowing, match.share, channelsFirst)) ?? undefined,
        anyWords: (!channelsFirst && narrowing?.anyOf) || undefined,
      };
      return { query, scope: channelFilter?.messages ?? watermark };
    },
  };
}

export type SearchPlanner = ReturnType<typeof createSearchPlanner>;
