import { sql } from 'kysely';
import type { ContextPost, HitContext, SourceDefinition } from '../../kit/source.ts';
import { documentDb } from './document-store.ts';

/** How a source's documents form conversations, and how one of its posts reads. */
export interface Conversation {
  /** The stored field naming the conversation (migration documents/0002 indexes it). */
  field: 'channel_id' | 'thread_id';
  /** A field that must also be equal, as thread ids are unique only within their forum. */
  within?: string;
  title(fields: Record<string, unknown>): string;
  author(fields: Record<string, unknown>): string | null;
  date(fields: Record<string, unknown>): string | null;
  postId(fields: Record<string, unknown>): string;
}

/** The hitContext of a document source: the posts stored before and after the hit in its conversation. */
export function documentContext(
  source: string,
  conversation: Conversation,
): NonNullable<SourceDefinition['hitContext']> {
  return async (context, hit, around): Promise<HitContext | null> => {
    const db = documentDb(context);
    const found = await db
      .selectFrom('documents')
      .select(['id', 'fields'])
      .where('source', '=', source)
      .where('doc_key', '=', hit.key)
      .executeTakeFirst();
    if (!found) return null;
    const hitFields = parsed(found.fields);
    const key = hitFields[conversation.field];
    if (typeof key !== 'string' && typeof key !== 'number') return null;
    let posts = db
      .selectFrom('documents')
      .select(['id', 'text', 'fields'])
      .where('source', '=', source)
      .where(sql<boolean>`(fields ->> ${sql.lit(conversation.field)}) = ${String(key)}`);
    if (conversation.within) {
      posts = posts.where(
        sql<boolean>`(fields ->> ${sql.lit(conversation.within)}) = ${String(hitFields[conversation.within])}`,
      );
    }
    const [earlier, hitAndLater] = await Promise.all([
      posts.where('id', '<', found.id).orderBy('id', 'desc').limit(around.before).execute(),
      posts
        .where('id', '>=', found.id)
        .orderBy('id')
        .limit(around.after + 1)
        .execute(),
    ]);
    return {
      title: conversation.title(hitFields),
      posts: [...earlier.reverse(), ...hitAndLater].map((row): ContextPost => {
        const fields = parsed(row.fields);
        return {
          id: conversation.postId(fields),
          author: conversation.author(fields),
          date: conversation.date(fields),
          text: row.text,
          is_hit: Number(row.id) === Number(found.id),
        };
      }),
    };
  };
}

// jsonb arrives parsed from PostgreSQL, text from SQLite.
const parsed = (fields: unknown): Record<string, unknown> =>
  typeof fields === 'string' ? (JSON.parse(fields) as Record<string, unknown>) : (fields as Record<string, unknown>);

/** A stored field as a post's author or date: text, or null when the record gave none. */
export const stringOrNull = (value: unknown): string | null =>
  value === null || value === undefined || value === '' ? null : String(value);
