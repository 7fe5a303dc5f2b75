import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Store } from '../db/store.ts';

const Status = Type.Object({ status: Type.String(), store: Type.Optional(Type.String()) });

export function healthRoutes(store: Store): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/healthz',
      { schema: { operationId: 'healthz', tags: ['operations'], summary: 'The process is up', response: { 200: Status } } },
      () => ({ status: 'ok' }),
    );
    app.get(
      '/readyz',
      {
        schema: {
          operationId: 'readyz',
          tags: ['operations'],
          summary: 'The store answers queries',
          response: { 200: Status, 503: Status },
        },
      },
      async (_request, reply) => {
        try {
          await store.ping();
          return { status: 'ready', store: store.engine };
        } catch {
          return reply.code(503).send({ status: 'unavailable', store: store.engine });
        }
      },
    );
  };
}
