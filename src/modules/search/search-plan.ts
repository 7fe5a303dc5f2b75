import type { Engine } from '../../db/store.ts';
import { AppError, validationError } from '../../lib/errors.ts';
import type { MatchQuery } from './match-source.ts';
import {
  matchCompilers,
  MIN_INDEXED_TERM_LENGTH,
  parseQuery,
  positiveTerms,
  QuerySyntaxError,
  type QueryNode,
  type TrigramStats,
  countingWords,
  lexiconRead,
} from '../sources/index.ts';
import type { FirstPageInput, SearchRepository } from './search.repository.ts';
import { SEARCH_LIMITS } from './search-limits.ts';

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

/** Turns a parsed query and its channels into the query the store runs. */
export function createSearchPlanner(deps: { engine: Engine; searches: SearchRepository; trigrams: TrigramStats }) {
  const { engine, searches, trigrams } = deps;
  const compile = matchCompilers[engine];

  return {
    /** The requested channels, deduplicated; null for none. */
    requestedChannels(ids: number[] | null | undefined): number[] | null {
      if (!ids || ids.length === 0) return null;
      const unique = [...new Set(ids)];
      if (unique.length > SEARCH_LIMITS.maxChannelIds) {
        throw validationError('channel_ids', `at most ${SEARCH_LIMITS.maxChannelIds} channels`);
      }
      return unique;
    },

    /**
     * The search as the store runs it, how many messages it covers, and its watermark (read
     * unless given: a recorded search's). What planning it needs is read in one statement
     * (SearchRepository.opening): the watermark, the channels' sizes and, on PostgreSQL, the
     * word index's narrowing of the query. When the chosen channels hold fewer messages than the
     * index would return, reading those channels' messages directly (through the channel index)
     * is the cheaper plan. `checked`: unknown channel ids are answered 400.
     */
    async matchQuery(
      tree: QueryNode,
      channelIds: number[] | null,
      options: { watermark?: number; checked: boolean; firstPage?: Omit<FirstPageInput, 'match'> },
    ) {
      const lexicon = engine === 'postgres' ? lexiconRead(tree) : null;
      const opened = await searches.opening({
        watermark: options.watermark === undefined,
        channelIds,
        columns: lexicon?.columns ?? [],
        // A channel filter of words is counted in the same statement (match-count.ts).
        countedWords: channelIds?.length ? lexicon?.anyOfColumns('o') : null,
        // Its page is walked as a filter read first is (below), without an index.
        firstPage: options.firstPage && { ...options.firstPage, match: compile(tree, { withoutIndex: true }) },
      });
      const watermark = options.watermark ?? opened.watermark;
      const unknown = channelIds?.filter((id) => !opened.channelSizes.has(id)) ?? [];
      if (options.checked && unknown.length)
        throw validationError('channel_ids', `unknown channel ids: ${unknown.join(', ')}`);
      const channelMessages = channelIds ? [...opened.channelSizes.values()].reduce((sum, n) => sum + n, 0) : undefined;
      const narrowing = lexicon?.narrowing(opened.row) ?? null;
      const { rarity, messages } = await trigrams.estimate(watermark);
      let match = compile(tree, { rarity, words: narrowing });
      const channelsFirst = channelMessages !== undefined && channelMessages <= match.share * messages;
      if (channelsFirst) match = compile(tree, { rarity, withoutIndex: true });
      const query: MatchQuery = {
        match,
        channelIds: channelIds ?? undefined,
        channelMessages,
        channelSizes: channelIds ? opened.channelSizes : undefined,
        channelsFirst,
        maxMessageId: watermark,
        // A count reads the word index only where that beats checking the text (a broad term in
        // many words is counted in chunks, or from the text: docs/architecture.md "Search").
        words: (narrowing && countingWords(narrowing, match.share, channelsFirst)) ?? undefined,
        anyWords: narrowing?.anyOf ?? undefined,
        channelPositions: channelIds ? opened.channelPositions : undefined,
        channelCounts: narrowing?.anyOf ? opened.channelCounts : undefined,
      };
      return { query, scope: channelMessages ?? watermark, watermark, firstPage: opened.firstPage };
    },
  };
}

export type SearchPlanner = ReturnType<typeof createSearchPlanner>;
