import { sql, type Kysely } from 'kysely';
import { likeContains } from '../../db/like.ts';
import type { Database } from '../../db/schema.ts';
import { foldText } from '../sources/index.ts';

export interface ChannelListFilter {
  search?: string;
  categoryId?: number;
  isActive?: boolean;
  offset: number;
  limit: number;
}

export function createChannelRepository(db: Kysely<Database>) {
  const channelsWithCategory = () =>
    db
      .selectFrom('channels as c')
      .leftJoin('categories as k', 'k.id', 'c.category_id')
      .select([
        'c.id',
        'c.platform',
        'c.platform_id',
        'c.username',
        'c.title',
        'c.category_id',
        'k.name as category_name',
        'c.is_active',
        'c.last_scraped_at',
        'c.total_messages_scraped',
      ]);

  return {
    async list(filter: ChannelListFilter) {
      let query = channelsWithCategory();
      if (filter.search) {
        query = query.where(likeContains(sql.ref('c.search_name'), foldText(filter.search)));
      }
      if (filter.categoryId !== undefined) query = query.where('c.category_id', '=', filter.categoryId);
      if (filter.isActive !== undefined) query = query.where('c.is_active', '=', filter.isActive ? 1 : 0);
      const { total } = await query
        .clearSelect()
        .select((eb) => eb.fn.countAll<number>().as('total'))
        .executeTakeFirstOrThrow();
      const items = await query.orderBy('c.id').offset(filter.offset).limit(filter.limit).execute();
      return { items, total: Number(total) };
    },

    async listCategories(offset: number, limit: number) {
      const items = await db
        .selectFrom('categories as k')
        .leftJoin('channels as c', 'c.category_id', 'k.id')
        .select((eb) => ['k.id', 'k.name', eb.fn.count<number>('c.id').as('channel_count')])
        .groupBy(['k.id', 'k.name'])
        .orderBy('k.name')
        .offset(offset)
        .limit(limit)
        .execute();
      const { total } = await db
        .selectFrom('categories')
        .select((eb) => eb.fn.countAll<number>().as('total'))
        .executeTakeFirstOrThrow();
      return { items, total: Number(total) };
    },
  };
}

export type ChannelRepository = ReturnType<typeof createChannelRepository>;
