import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { withErrors } from '../../http/schemas.ts';
import { isoDateOrNull as iso } from '../../lib/iso-date.ts';
import type { ChannelRepository } from './channel.repository.ts';
import { CategoryList, ChannelList, ChannelQuery, Paging } from './search.schemas.ts';

const pages = (total: number, pageSize: number) => Math.ceil(total / pageSize);

/** The tracked messenger channels and their categories, as searches can be narrowed to them. */
export function channelRoutes(channels: ChannelRepository): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/service/messenger-channels/',
      {
        schema: {
          operationId: 'messengerChannels',
          tags: ['messenger search'],
          summary: 'Tracked channels',
          querystring: ChannelQuery,
          response: withErrors({ 200: ChannelList }, [400, 401, 429]),
        },
        config: { rateLimit: { service: 'messenger-channels', name: 'Messenger channels' } },
      },
      async (request) => {
        const { page, page_size, search: text, category_id, is_active } = request.query;
        const { items, total } = await channels.list({
          search: text,
          categoryId: category_id,
          isActive: is_active,
          offset: (page - 1) * page_size,
          limit: page_size,
        });
        return {
          items: items.map((c) => ({
            ...c,
            id: Number(c.id),
            category_id: c.category_id === null ? null : Number(c.category_id),
            is_active: Number(c.is_active) === 1,
            last_scraped_at: iso(c.last_scraped_at),
            total_messages_scraped: Number(c.total_messages_scraped),
          })),
          total,
          page,
          page_size,
          total_pages: pages(total, page_size),
        };
      },
    );

    app.get(
      '/service/messenger-channels-categories/',
      {
        schema: {
          operationId: 'messengerChannelCategories',
          tags: ['messenger search'],
          summary: 'Channel categories with their channel counts',
          querystring: Type.Object(Paging(100, 500)),
          response: withErrors({ 200: CategoryList }, [400, 401, 429]),
        },
        config: { rateLimit: { service: 'messenger-channels-categories', name: 'Messenger channel categories' } },
      },
      async (request) => {
        const { page, page_size } = request.query;
        const { items, total } = await channels.listCategories((page - 1) * page_size, page_size);
        return {
          items: items.map((k) => ({ id: Number(k.id), name: k.name, channel_count: Number(k.channel_count) })),
          total,
          page,
          page_size,
          total_pages: pages(total, page_size),
        };
      },
    );
  };
}
