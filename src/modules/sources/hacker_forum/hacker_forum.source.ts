import { Type } from '@sinclair/typebox';
import { fieldIn, fieldInAnyCase } from '../common/documents/document-match.ts';
import { documentSource } from '../common/documents/document-source.ts';
import { stringOrNull } from '../common/documents/document-context.ts';
import { oneOf } from '../kit/arg-params.ts';
import { defineSource } from '../kit/source.ts';
import { loadDemoForums } from './demo-forum.ts';
import { CONTENT_TYPES, forumJsonLines } from './forum-record.ts';
import { discourseTopics, forumThreads } from './forum-threads.ts';
import { hackerForumStix } from './hacker-forum-stix.ts';

// Forum posts are long: enough text around the match to judge it from the alert.
const PREVIEW_CHARS = 400;

/**
 * Hacker forum (id 11): threads, replies and marketplace offers scraped from cybercrime forums,
 * ingested as JSON Lines into the document store (../documents) and matched with the search
 * query language.
 */
export const hackerForumSource = defineSource({
  stix: hackerForumStix,
  id: 11,
  name: 'hacker_forum',
  alias: 'Hacker forums',
  description: 'Threads, posts and marketplace offers on cybercrime forums that mention the watched terms.',
  serviceType: 'sync',
  frequency: 'daily',
  excludableFields: ['forum', 'author', 'thread_id'],
  filterableFields: ['forum', 'section', 'content_type', 'author', 'language'],
  sortableFields: ['posted_at', 'discovered_at', 'forum', 'author'],
  hasData: true,
  ...documentSource({
    name: 'hacker_forum',
    args: Type.Object({
      query: Type.String({
        description: 'Search query: terms, "phrases", AND, OR, NOT, ( )',
        examples: ['"acme bank" AND (access OR database OR rdp)'],
      }),
      forums: Type.Optional(
        Type.Array(Type.String(), {
          description: 'Only these forums (names as shown in hits, any case)',
          examples: [['xss', 'exploit']],
        }),
      ),
      content_types: Type.Optional(
        Type.Array(oneOf(CONTENT_TYPES), {
          description: 'Only these kinds of content',
          examples: [['thread', 'marketplace']],
        }),
      ),
    }),
    search: (args) => {
      const filters = [];
      if (args.forums?.length) filters.push(fieldInAnyCase('forum', args.forums));
      if (args.content_types?.length) filters.push(fieldIn('content_type', args.content_types));
      return { filters, contextChars: PREVIEW_CHARS, previewField: 'content' };
    },
    conversation: {
      field: 'thread_id',
      within: 'forum',
      title: (fields) => `${String(fields.forum)} › ${String(fields.thread_title ?? fields.thread_id)}`,
      author: (fields) => stringOrNull(fields.author),
      date: (fields) => stringOrNull(fields.posted_at),
      postId: (fields) => String(fields.post_id),
    },
    ingester: {
      description:
        "hacker-forum posts: Dragnet JSON Lines (one post a line), forum scrapers' thread documents with a posts array, Discourse /t/<id>.json topics; files, folders or - (stdin)",
      noun: 'posts',
      formats: { jsonl: forumJsonLines, thread: forumThreads, discourse: discourseTopics },
    },
  }),
  async demo(context, now) {
    const added = await loadDemoForums(context, now);
    return `Demo hacker forums: ${added} forum posts added (try hacker_forum with the query "acme bank" AND (access OR database OR rdp))`;
  },
});
