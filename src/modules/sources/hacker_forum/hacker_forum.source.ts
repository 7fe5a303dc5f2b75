import { fieldIn, fieldInAnyCase, queryErrors } from '../common/documents/document-match.ts';
import { documentSource } from '../common/documents/document-source.ts';
import type { SourceDefinition } from '../kit/source.ts';
import { loadDemoForums } from './demo-forum.ts';
import { CONTENT_TYPES, forumJsonLines } from './forum-record.ts';

interface HackerForumArgs {
  query: string;
  forums?: string[];
  content_types?: string[];
}

// Forum posts are long: enough text around the match to judge it from the alert.
const PREVIEW_CHARS = 400;

/**
 * Hacker forum (id 11): threads, replies and marketplace offers scraped from cybercrime forums,
 * ingested as JSON Lines into the document store (../documents) and matched with the search
 * query language.
 */
export const hackerForumSource: SourceDefinition = {
  id: 11,
  name: 'hacker_forum',
  alias: 'Hacker forums',
  description: 'Threads, posts and marketplace offers on cybercrime forums that mention the watched terms.',
  serviceType: 'sync',
  frequency: 'daily',
  params: [
    { name: 'query', type: 'String', required: true, hint: 'Search query: terms, "phrases", AND, OR, NOT, ( )', example: '"acme bank" AND (access OR database OR rdp)' },
    { name: 'forums', type: 'Array[String]', required: false, hint: 'Only these forums (names as shown in hits, any case)', example: ['xss', 'exploit'] },
    { name: 'content_types', type: 'Array[String]', required: false, hint: 'Only these kinds of content', example: ['thread', 'marketplace'], valid_values: [...CONTENT_TYPES] },
  ],
  excludableFields: ['forum', 'author', 'thread_id'],
  filterableFields: ['forum', 'section', 'content_type', 'author', 'language'],
  sortableFields: ['posted_at', 'discovered_at', 'forum', 'author'],
  hasData: true,
  checkArgs: queryErrors,
  ...documentSource<HackerForumArgs>({
    name: 'hacker_forum',
    search: (args) => {
      const filters = [];
      if (args.forums?.length) filters.push(fieldInAnyCase('forum', args.forums));
      if (args.content_types?.length) filters.push(fieldIn('content_type', args.content_types));
      return { filters, contextChars: PREVIEW_CHARS, previewField: 'content' };
    },
    ingester: {
      description: 'hacker-forum threads, posts and marketplace offers as JSON Lines (one post a line), files, folders or - (stdin)',
      noun: 'posts',
      formats: { jsonl: forumJsonLines },
    },
  }),
  async demo(context, now) {
    const added = await loadDemoForums(context, now);
    return `Demo hacker forums: ${added} forum posts added (try hacker_forum with the query "acme bank" AND (access OR database OR rdp))`;
  },
};
