import { jsonValues, orReason, type DocumentFormat, type DocumentRecord } from '../common/documents/document-ingest.ts';
import { htmlToText, looksLikeHtml } from '../common/documents/html-text.ts';
import {
  firstOf,
  httpUrl,
  isJsonObject,
  RecordError,
  scrapedDate,
  type JsonObject,
} from '../common/documents/record-fields.ts';
import { plausibleTime } from '../common/ingest/timestamp.ts';
import { forumDocument, type ForumPostFields } from './forum-record.ts';

/**
 * Threads as forum scrapers save them (docs/ingest.md "Hacker forums"): a thread document with
 * its `posts` (XenForo, vBulletin, phpBB and MyBB scrapers), or a Discourse topic as
 * `/t/<id>.json` serves it; one a file (pretty-printed, or an array of them) or one a line.
 * Each post becomes one stored post; HTML bodies are searched as text and kept for display.
 */

// A thread of thousands of posts with their HTML stays far below this.
const MAX_THREAD_BYTES = 256 << 20;

const THREAD = {
  title: ['thread_title', 'title', 'topic_title', 'subject', 'name'],
  url: ['thread_url', 'url', 'topic_url', 'link'],
  forum: ['forum', 'forum_name', 'site', 'board'],
  section: ['section', 'subforum', 'sub_forum', 'category', 'forum_section'],
  id: ['thread_id', 'id', 'topic_id', 'threadId', 'topicId'],
} as const;

const POST = {
  id: ['post_id', 'id', 'postId', 'pid'],
  author: ['author', 'username', 'user', 'poster', 'author_name', 'name'],
  date: ['date', 'timestamp', 'posted_at', 'created_at', 'time', 'datetime', 'post_date', 'published'],
  body: ['body', 'content', 'message', 'text', 'html', 'body_html', 'content_html', 'post_content', 'cooked'],
  url: ['post_url', 'url', 'link', 'permalink'],
} as const;

/** A post's author: a name, or an object naming them (`{"username": …}`). */
function authorOf(post: JsonObject): string | null {
  for (const name of POST.author) {
    const value = post[name];
    if (isJsonObject(value)) return firstOf(value, ['username', 'name', 'login']);
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
  }
  return null;
}

function dateOf(post: JsonObject, warn: (reason: string) => void): string | null {
  const name = POST.date.find((key) => post[key] !== undefined && post[key] !== null && post[key] !== '');
  if (name === undefined) {
    warn('post date missing');
    return null;
  }
  const ms = plausibleTime(scrapedDate(post[name], warn, 'post date'), warn, 'post date');
  return ms === null ? null : new Date(ms).toISOString();
}

/** A body as text for search and previews, and as HTML when it was HTML. */
function bodyOf(post: JsonObject): { text: string; html?: string } {
  const body = firstOf(post, POST.body);
  if (body === null) throw new RecordError(`the post has no body (${POST.body.join(', ')})`);
  return looksLikeHtml(body) ? { text: htmlToText(body), html: body } : { text: body };
}

interface Thread {
  forum: string;
  section: string | null;
  threadId: string | null;
  title: string;
  url: string | null;
}

/** One post of `thread` (its `index`-th, from 0) as a record. */
function postRecord(
  thread: Thread,
  post: unknown,
  index: number,
  location: string,
  firstPost: (post: JsonObject) => boolean,
): DocumentRecord {
  const warnings: string[] = [];
  const record = orReason(() => {
    if (!isJsonObject(post)) throw new RecordError('not a JSON object');
    const body = bodyOf(post);
    // A post without an id is keyed by its place in its thread, when the thread has an id.
    const postId = firstOf(post, POST.id) ?? (thread.threadId === null ? null : `${thread.threadId}#${index + 1}`);
    if (postId === null) throw new RecordError(`the post has no id (${POST.id.join(', ')}) and its thread none`);
    const fields: ForumPostFields = {
      post_id: postId,
      thread_id: thread.threadId ?? '',
      forum: thread.forum,
      section: thread.section,
      content_type: firstPost(post) ? 'thread' : 'post',
      thread_title: thread.title,
      title: null,
      author: authorOf(post),
      language: null,
      url: httpUrl(firstOf(post, POST.url)) ?? thread.url,
      posted_at: dateOf(post, (reason) => warnings.push(reason)),
      ...(body.html === undefined ? {} : { body_html: body.html }),
    };
    return forumDocument(fields, body.text);
  });
  return { location: `${location} posts[${index}]`, record, warnings };
}

/** A scraper's thread document: `{title, url, forum, id, posts: [{author, date, id, body}]}`. */
function* threadRecords(value: unknown, location: string): Iterable<DocumentRecord> {
  const thread = orReason(() => {
    if (!isJsonObject(value) || !Array.isArray(value.posts)) throw new RecordError('not a thread: no "posts" array');
    const url = httpUrl(firstOf(value, THREAD.url));
    const forum =
      firstOf(value, THREAD.forum)?.toLowerCase() ??
      (url === null ? null : new URL(url).hostname.replace(/^www\./, ''));
    if (forum === null) throw new RecordError(`the thread names no forum (${THREAD.forum.join(', ')}) and has no URL`);
    const title = firstOf(value, THREAD.title);
    if (title === null) throw new RecordError(`the thread has no title (${THREAD.title.join(', ')})`);
    return {
      thread: { forum, section: firstOf(value, THREAD.section), threadId: firstOf(value, THREAD.id), title, url },
      posts: value.posts as unknown[],
    };
  });
  if (typeof thread === 'string') {
    yield { location, record: thread };
    return;
  }
  for (const [index, post] of thread.posts.entries())
    yield postRecord(thread.thread, post, index, location, () => index === 0);
}

/**
 * A Discourse topic (`/t/<id>.json`): `{id, title, slug, post_stream: {posts: [{id, username,
 * created_at, cooked, post_number}]}}`. The JSON names no site, so the forum is `discourse`
 * and the topic id keys each post with its id.
 */
function* discourseRecords(value: unknown, location: string): Iterable<DocumentRecord> {
  const stream = isJsonObject(value) && isJsonObject(value.post_stream) ? value.post_stream.posts : undefined;
  if (!isJsonObject(value) || !Array.isArray(stream)) {
    yield { location, record: 'not a Discourse topic: no "post_stream.posts" array' };
    return;
  }
  const topicId = firstOf(value, ['id']);
  const title = firstOf(value, ['title', 'fancy_title']);
  if (topicId === null || title === null) {
    yield { location, record: 'the Discourse topic has no id or title' };
    return;
  }
  const thread: Thread = { forum: 'discourse', section: null, threadId: topicId, title, url: null };
  for (const [index, post] of stream.entries()) {
    const record = postRecord(thread, post, index, location, (p) => p.post_number === 1);
    if (typeof record.record !== 'string')
      record.record.key = `discourse:${topicId}:${(record.record.fields as ForumPostFields).post_id}`;
    yield { ...record, location: `${location} post_stream.posts[${index}]` };
  }
}

const firstKeys = (head: string): string => head.slice(0, 4096);

/** `--format thread`: scrapers' thread documents with a `posts` array. */
export const forumThreads: DocumentFormat = {
  writtenBy: 'forum scrapers (XenForo, vBulletin, phpBB, MyBB): a thread JSON with a "posts" array',
  accepts: (file) => /\.(jsonl|ndjson|json)$/i.test(file),
  detect: (head) => /^\s*[[{]/.test(head) && /"posts"\s*:\s*\[/.test(head) && !head.includes('"post_stream"'),
  read: jsonValues(threadRecords, MAX_THREAD_BYTES),
};

/** `--format discourse`: Discourse topics as `/t/<id>.json` serves them. */
export const discourseTopics: DocumentFormat = {
  writtenBy: 'Discourse /t/<id>.json (any version since 1.0)',
  accepts: (file) => /\.(jsonl|ndjson|json)$/i.test(file),
  detect: (head) => /^\s*[[{]/.test(head) && firstKeys(head).includes('"post_stream"'),
  read: jsonValues(discourseRecords, MAX_THREAD_BYTES),
};
