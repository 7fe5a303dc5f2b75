import type { Insertable, Kysely } from 'kysely';
import type { Database, SearchHistoryTable } from '../../db/schema.ts';

/** search_history: what each search was (query, options, watermark, counts), never its matches. */
export function createSearchHistoryRepository(db: Kysely<Database>) {
  return {
    async insert(values: Insertable<SearchHistoryTable>): Promise<number> {
      const inserted = await db.insertInto('search_history').values(values).returning('id').executeTakeFirstOrThrow();
      return Number(inserted.id);
    },

    find: (orgId: number, historyId: number) =>
      db
        .selectFrom('search_history')
        .selectAll()
        .where('org_id', '=', orgId)
        .where('id', '=', historyId)
        .executeTakeFirst(),

    /** A page of the organization's searches, newest first, and how many it has. */
    async page(orgId: number, offset: number, limit: number) {
      const base = db.selectFrom('search_history').where('org_id', '=', orgId);
      const { total } = await base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
      const rows = await base
        .selectAll()
        .orderBy('searched_at', 'desc')
        .orderBy('id', 'desc')
        .offset(offset)
        .limit(limit)
        .execute();
      return { rows, total: Number(total) };
    },

    /** Deletes a user's own search: whether there was one. */
    async deleteOwn(context: { orgId: number; userId: number }, historyId: number): Promise<boolean> {
      const deleted = await db
        .deleteFrom('search_history')
        .where('org_id', '=', context.orgId)
        .where('user_id', '=', context.userId)
        .where('id', '=', historyId)
        .executeTakeFirst();
      return Number(deleted.numDeletedRows) > 0;
    },

    async delete(historyId: number): Promise<void> {
      await db.deleteFrom('search_history').where('id', '=', historyId).execute();
    },

    /** Deletes the searches made before `before` (ms): how many went. */
    async deleteBefore(before: number): Promise<number> {
      const deleted = await db.deleteFrom('search_history').where('searched_at', '<', before).executeTakeFirst();
      return Number(deleted.numDeletedRows);
    },
  };
}
