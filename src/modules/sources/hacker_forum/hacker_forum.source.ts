import { sourceWithoutData } from '../source.ts';

/**
 * Hacker forum (id 11): threads, posts and marketplace offers on cybercrime forums, matched
 * with the search query language.
 *
 * Hit data: post_id, thread_id, forum, section, content_type, thread_title, author, content,
 * language, url, posted_at.
 */
export const hackerForumSource = sourceWithoutData({
  id: 11,
  name: 'hacker_forum',
  alias: 'Hacker forums',
  description: 'Threads, posts and marketplace offers on cybercrime forums that mention the watched terms.',
  serviceType: 'sync',
  frequency: 'daily',
  params: [
    { name: 'query', type: 'String', required: true, hint: 'Search query: terms, "phrases", AND, OR, NOT, ( )', example: '"acme bank" AND (access OR database OR rdp)' },
    { name: 'forums', type: 'Array[String]', required: false, hint: 'Only these forums (names as shown in hits)', example: ['xss', 'exploit'] },
    { name: 'content_types', type: 'Array[String]', required: false, hint: 'Only these kinds of content', example: ['thread', 'marketplace'], valid_values: ['thread', 'post', 'marketplace'] },
  ],
  excludableFields: ['forum', 'author', 'thread_id'],
  filterableFields: ['forum', 'section', 'content_type', 'author', 'language'],
  sortableFields: ['posted_at', 'forum', 'author'],
});
