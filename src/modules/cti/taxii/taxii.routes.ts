import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest, preParsingHookHandler } from 'fastify';
import { requireAuth } from '../../../http/auth.plugin.ts';
import { AppError, notFound } from '../../../lib/errors.ts';
import type { TaxiiCollection, TaxiiCollections } from './taxii-collections.ts';
import { decodeNext, type ObjectFilters, type ObjectPager } from './taxii-objects.ts';
import {
  acceptsTaxii,
  parsePageQuery,
  refuseWrite,
  sendEnvelope,
  sendManifest,
  sendTaxii,
  sendTaxiiError,
  sendVersions,
  STIX_MEDIA_TYPE,
  TAXII_MEDIA_TYPE,
  taxiiErrorHandler,
  type PageQuery,
} from './taxii-http.ts';

/** Dragnet's one API root, under the discovery endpoint's prefix (docs/taxii.md). */
export const TAXII_PREFIX = '/taxii2';
export const API_ROOT = 'dragnet';

const TAG = 'taxii';
// Every TAXII endpoint needs a user's access token or an API key (Bearer, or Basic password),
// and all of them count against one usage service: a client's poll walks several of them.
const config = { requiresAuth: true, basicAuth: true, rateLimit: { service: 'taxii', name: 'TAXII 2.1' } } as const;
const security = [{ bearerAuth: [] }];

const CollectionParams = Type.Object({ collection: Type.String({ description: 'A collection id (UUID)' }) });
const ObjectParams = Type.Object({
  collection: Type.String({ description: 'A collection id (UUID)' }),
  object: Type.String({ description: 'A STIX object id, e.g. indicator--<uuid>' }),
});
const filter = (description: string) => Type.Optional(Type.String({ description }));
const PageQuerySchema = Type.Object({
  added_after: filter('Only objects added strictly after this timestamp (RFC 3339, UTC)'),
  limit: filter('Objects per page: default 1000, at most 10000'),
  next: filter('The `next` of the previous page'),
  'match[id]': filter('Comma-separated STIX ids'),
  'match[type]': filter('Comma-separated STIX types'),
  'match[version]': filter('last (default), first, all, or comma-separated timestamps'),
  'match[spec_version]': filter('Comma-separated STIX spec versions (2.1)'),
});
/** What the routes return: written by hand (taxii-http.ts), described here for the OpenAPI document. */
const TaxiiBody = Type.Object({}, { additionalProperties: true, description: `${TAXII_MEDIA_TYPE} (docs/taxii.md)` });

/** A route's schema: its id, summary, and the TAXII tag, security and body shared by all. */
const schemaOf = (operationId: string, summary: string, extra: Record<string, unknown> = {}) => ({
  operationId,
  summary,
  tags: [TAG],
  security,
  response: { 200: TaxiiBody },
  ...extra,
});

const collectionView = (collection: TaxiiCollection) => ({
  id: collection.id,
  title: collection.title,
  description: collection.description,
  can_read: true,
  can_write: false,
  media_types: [STIX_MEDIA_TYPE],
});

/** The URL of the API root as the client reached us (behind a proxy: X-Forwarded-* with trustProxy). */
const apiRootUrl = (request: FastifyRequest) => `${request.protocol}://${request.host}${TAXII_PREFIX}/${API_ROOT}/`;

type Deps = { collections: TaxiiCollections; pager: ObjectPager };

/** Every answer of the scope, errors included, is a TAXII resource; 404/405 too; 406 first. */
function guardScope(app: FastifyInstance) {
  app.setErrorHandler(taxiiErrorHandler);
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const methods = (['GET', 'POST', 'DELETE'] as const).filter((method) => app.hasRoute({ method, url: path }));
    if (methods.length === 0) return sendTaxiiError(request, reply, notFound(`TAXII resource ${path}`));
    void reply.header('allow', methods.join(', '));
    const error = new AppError('method_not_allowed', `${request.method} is not allowed on ${path}`);
    return sendTaxiiError(request, reply, error);
  });
  // Section 1.6.8.1: a client that cannot take TAXII 2.1 JSON gets a 406, before anything else.
  app.addHook('onRequest', (request, _reply, done) => {
    const refused = new AppError('not_acceptable', `Accept must allow ${TAXII_MEDIA_TYPE} (or */*)`);
    done(acceptsTaxii(request.headers.accept) ? undefined : refused);
  });
}

/** Discovery, the API root and the collections (sections 4.1, 4.2, 5.1, 5.2). */
function resourceRoutes(app: FastifyInstance, { collections }: Deps) {
  app.get('/', { config, schema: schemaOf('taxiiDiscovery', 'TAXII 2.1 discovery') }, (request, reply) => {
    const root = apiRootUrl(request);
    return sendTaxii(reply, {
      title: 'Dragnet TAXII 2.1',
      description: "The hits of the organization's monitoring rules as STIX 2.1, read-only.",
      default: root,
      api_roots: [root],
    });
  });
  app.get(`/${API_ROOT}/`, { config, schema: schemaOf('taxiiApiRoot', 'The TAXII API root') }, (_request, reply) =>
    sendTaxii(reply, {
      title: 'Dragnet',
      description: 'One collection of all incidents, and one per monitoring rule, of the organization.',
      versions: [TAXII_MEDIA_TYPE],
      max_content_length: app.initialConfig.bodyLimit ?? 1_048_576,
    }),
  );
  app.get(
    `/${API_ROOT}/collections/`,
    { config, schema: schemaOf('taxiiCollections', "The organization's collections") },
    async (request, reply) =>
      sendTaxii(reply, { collections: (await collections.list(requireAuth(request).orgId)).map(collectionView) }),
  );
  app.get(
    `/${API_ROOT}/collections/:collection/`,
    { config, schema: schemaOf('taxiiCollection', 'One collection', { params: CollectionParams }) },
    async (request, reply) => sendTaxii(reply, collectionView(await collectionOf(collections, request))),
  );
  app.get(
    `/${API_ROOT}/status/:status/`,
    {
      config,
      schema: schemaOf('taxiiStatus', 'Always 404: a read-only server has no status of a write', {
        params: Type.Object({ status: Type.String() }),
      }),
    },
    () => {
      throw notFound('status');
    },
  );
}

// The routes' schemas type params and query; these helpers read them for any of those routes.
const collectionOf = (collections: TaxiiCollections, request: FastifyRequest) =>
  collections.get(requireAuth(request).orgId, (request.params as { collection: string }).collection);

/** Objects, manifest, one object and its versions (sections 5.3 to 5.8); writes refused. */
function objectRoutes(app: FastifyInstance, { collections, pager }: Deps) {
  async function objectPage(request: FastifyRequest, only?: Partial<ObjectFilters>) {
    const collection = await collectionOf(collections, request);
    const raw = request.query as PageQuery;
    const query = parsePageQuery(raw);
    return pager({
      orgId: requireAuth(request).orgId,
      collection,
      after: raw.next === undefined ? null : decodeNext(raw.next),
      addedAfter: query.addedAfter,
      limit: query.limit,
      filters: { ...query.filters, ...only },
    });
  }
  // Before the body is read: the collection must be the caller's (404), then the refusal (403).
  const refuse =
    (what: string): preParsingHookHandler =>
    async (request) => {
      await collectionOf(collections, request);
      throw refuseWrite(what);
    };
  const paged = (params: typeof CollectionParams | typeof ObjectParams) => ({ params, querystring: PageQuerySchema });
  const objects = `/${API_ROOT}/collections/:collection/objects/`;
  const object = `${objects}:object/`;

  app.get(
    objects,
    { config, schema: schemaOf('taxiiObjects', "A page of the collection's objects", paged(CollectionParams)) },
    async (request, reply) => sendEnvelope(reply, await objectPage(request)),
  );
  app.get(
    `/${API_ROOT}/collections/:collection/manifest/`,
    { config, schema: schemaOf('taxiiManifest', "A page of the collection's manifest", paged(CollectionParams)) },
    async (request, reply) => sendManifest(reply, await objectPage(request)),
  );
  app.get(
    object,
    { config, schema: schemaOf('taxiiObject', 'One object (its versions) as an envelope', paged(ObjectParams)) },
    async (request, reply) => {
      const page = await objectPage(request, { ids: new Set([(request.params as { object: string }).object]) });
      if (page.items.length === 0 && !page.next) throw notFound('object');
      return sendEnvelope(reply, page);
    },
  );
  app.get(
    `${object}versions/`,
    { config, schema: schemaOf('taxiiObjectVersions', "An object's versions", paged(ObjectParams)) },
    async (request, reply) => {
      const id = (request.params as { object: string }).object;
      const page = await objectPage(request, { ids: new Set([id]), versions: null });
      if (page.items.length === 0 && !page.next) throw notFound('object');
      return sendVersions(reply, page);
    },
  );
  const refused = (operationId: string, params: typeof CollectionParams | typeof ObjectParams) => ({
    config,
    schema: { ...schemaOf(operationId, 'Refused: the server is read-only (403)', { params }), response: {} },
  });
  app.post(
    objects,
    { ...refused('taxiiAddObjects', CollectionParams), preParsing: refuse('objects cannot be added') },
    () => {
      throw refuseWrite('objects cannot be added');
    },
  );
  app.delete(
    object,
    { ...refused('taxiiDeleteObject', ObjectParams), preParsing: refuse('objects cannot be deleted') },
    () => {
      throw refuseWrite('objects cannot be deleted');
    },
  );
}

/**
 * The read-only TAXII 2.1 server (OASIS taxii-v2.1-os): discovery, one API root, the
 * organization's collections and their objects, manifest and versions. Every response, errors
 * included, is `application/taxii+json;version=2.1`.
 */
export function taxiiRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    guardScope(app);
    resourceRoutes(app, deps);
    objectRoutes(app, deps);
  };
}
