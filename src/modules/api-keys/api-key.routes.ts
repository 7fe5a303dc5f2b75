import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { requireAuth } from '../../http/auth.plugin.ts';
import { LinkedPage, withErrors } from '../../http/schemas.ts';
import { linkedPage, pageWindow } from '../../lib/pagination.ts';
import { requestOrigin } from '../audit/index.ts';
import { ApiKey, ApiKeyCreateBody, ApiKeyIdParams, ApiKeyListQuery, CreatedApiKey } from './api-key.schemas.ts';
import type { ApiKeyService, KeyManager } from './api-key.service.ts';

const PREFIX = '/service/alert_system_api_key_';
const TAG = 'API keys';
// Managing keys needs a person's session: a key that could make keys would outlive its own revocation.
const config = { requiresSession: true };

const manager = (request: FastifyRequest): KeyManager => ({
  origin: requestOrigin(request),
  user: requireAuth(request).user,
});

/** docs/api.md "API keys": create (the key shown once), list, revoke. */
export function apiKeyRoutes(service: ApiKeyService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      `${PREFIX}create/`,
      {
        config,
        schema: {
          operationId: 'createApiKey',
          tags: [TAG],
          summary: 'Create an API key for the organization; the key is in this response only',
          body: ApiKeyCreateBody,
          response: withErrors({ 201: CreatedApiKey }, [400, 401, 403, 409, 429]),
        },
      },
      async (request, reply) => reply.code(201).send(await service.create(manager(request), request.body)),
    );

    const listPath = `${PREFIX}list/`;
    app.get(
      listPath,
      {
        config,
        schema: {
          operationId: 'listApiKeys',
          tags: [TAG],
          summary: "The organization's API keys, revoked and expired ones too, newest first (never the keys)",
          querystring: ApiKeyListQuery,
          response: withErrors({ 200: LinkedPage(ApiKey) }, [400, 401, 403, 429]),
        },
      },
      async (request) => {
        const { results, total } = await service.list(requireAuth(request).orgId, pageWindow(request.query));
        return linkedPage(listPath, request.query, total, results);
      },
    );

    app.post(
      `${PREFIX}revoke/:id/`,
      {
        config,
        schema: {
          operationId: 'revokeApiKey',
          tags: [TAG],
          summary: 'Revoke an API key: it stops working at once (revoking a revoked key changes nothing)',
          params: ApiKeyIdParams,
          response: withErrors({ 200: ApiKey }, [400, 401, 403, 404, 429]),
        },
      },
      async (request) => service.revoke(manager(request), request.params.id),
    );
  };
}
