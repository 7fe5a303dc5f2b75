import { jsonLines, type DocumentFormat } from '../common/documents/document-ingest.ts';
import type { DocumentInput } from '../common/documents/document-store.ts';
import { isJsonObject, recordFields, RecordError } from '../common/documents/record-fields.ts';

/**
 * A forum post as JSON Lines (docs/ingest.md "Hacker forums"), one post a line:
 * `{forum, section, thread_id, thread_title, post_id, author, date, title?, body, url,
 * content_type, language?}`, as a forum scraper writes them.
 */
export const CONTENT_TYPES = ['thread', 'post', 'marketplace'] as const;

export type ContentType = (typeof CONTENT_TYPES)[number];

/** The hit fields of a post, as stored (the preview of its text is added per hit). */
export type ForumPostFields = {
  post_id: string;
  thread_id: string;
  forum: string;
  section: string | null;
  content_type: ContentType;
  thread_title: string;
  title: string | null;
  /** Null only for a scraped thread whose post names no author. */
  author: string | null;
  language: string | null;
  url: string | null;
  /** Null when the scraper's date could not be read unambiguously (with a warning). */
  posted_at: string | null;
  /** The post as the forum wrote it, when it was HTML: `text` is its text. */
  body_html?: string;
};

const LANGUAGE = /^[a-z]{2,3}(?:-[a-z0-9]{2,8})?$/;

/**
 * A post's document from our JSONL record (forumDocument says what is searched). A reply is not
 * found by its thread's title: every reply of a thread called "Acme Bank access" would match it.
 */
export function forumPostDocument(value: unknown): DocumentInput {
  if (!isJsonObject(value)) throw new RecordError('not a JSON object');
  const read = recordFields(value);
  // Forum names are compared without case: the store keeps them lower-case.
  const forum = read.string('forum').trim().toLowerCase();
  const contentType = read.oneOf('content_type', CONTENT_TYPES);
  const threadTitle = read.string('thread_title');
  const title = read.optionalString('title');
  const body = read.optionalString('body') ?? '';
  if (body === '' && title === null) throw new RecordError('body is required');
  const language = read.optionalString('language')?.trim().toLowerCase() ?? null;
  if (language !== null && !LANGUAGE.test(language))
    throw new RecordError('language must be a language code such as en or ru');
  const postId = read.id('post_id');
  const fields: ForumPostFields = {
    post_id: postId,
    thread_id: read.id('thread_id'),
    forum,
    section: read.string('section'),
    content_type: contentType,
    thread_title: threadTitle,
    title,
    author: read.string('author'),
    language,
    url: read.url('url'),
    posted_at: new Date(read.date('date')).toISOString(),
  };
  return forumDocument(fields, body);
}

/**
 * A post's document from its fields and body text. The searched text is the post's title (when
 * it has its own) and body; a thread's opening post and a marketplace offer are found by the
 * thread title too, a reply is not.
 */
export function forumDocument(fields: ForumPostFields, body: string): DocumentInput {
  const heading = [
    fields.content_type === 'post' ? null : fields.thread_title,
    fields.title === fields.thread_title ? null : fields.title,
  ];
  const text = [...heading, body].filter((part): part is string => part !== null && part !== '').join('\n');
  // Post ids are unique within a forum (XenForo, vBulletin, MyBB number posts forum-wide).
  return { key: `${fields.forum}:${fields.post_id}`, text, fields };
}

/** `--format jsonl`: `.jsonl`, `.ndjson` (and `.json`) files, or standard input. */
export const forumJsonLines: DocumentFormat = {
  writtenBy: 'Dragnet forum post JSON Lines (docs/ingest.md)',
  // Our record is flat: one post a line, with its thread's title beside it.
  detect: (head) =>
    /^\s*\{[^\n]*"thread_title"\s*:[^\n]*"post_id"\s*:|^\s*\{[^\n]*"post_id"\s*:[^\n]*"thread_title"\s*:/.test(head),
  accepts: (file) => /\.(jsonl|ndjson|json)$/i.test(file),
  read: jsonLines(forumPostDocument),
};
