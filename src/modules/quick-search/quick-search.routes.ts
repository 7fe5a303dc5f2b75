import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireAuth } from '../../http/auth.plugin.ts';
import { MAX_PAGE, Nullable, OrgIdQuery, withErrors } from '../../http/schemas.ts';
import { linkedPage, pageWindow } from '../../lib/pagination.ts';
import type { LeakQueries } from '../sources/index.ts';
import type { LimitResolver, RateLimiter } from '../usage/index.ts';
import type { QuickSearchRepository } from './quick-search.repository.ts';

const TAG = 'quick-search';

/** The endpoints whose remaining quota live_search_capacity reports (spec 8.1 table). */
export const QUICK_SEARCH_SLUGS = ['domain_quick_search', 'email_quick_search', 'accounts_database_search'] as const;

const Sighting = Type.Object({
  login: Type.String(),
  url: Nullable(Type.String()),
  host: Nullable(Type.String()),
  password: Type.String({ description: 'Masked: at most the first and last character' }),
  software: Nullable(Type.String()),
  country: Nullable(Type.String()),
  leak_name: Type.String(),
  leak_type: Type.String({ description: 'stealer_log or combolist' }),
  leaked_at: Nullable(Type.String({ format: 'date-time' })),
  discovered_at: Type.String({ format: 'date-time' }),
});

const DomainReport = Type.Object({
  domain: Type.String({ description: 'The registrable domain searched' }),
  total_sightings: Type.Integer(),
  distinct_credentials: Type.Integer(),
  by_source: Type.Array(Type.Object({ source: Type.String(), count: Type.Integer() })),
  by_leak_type: Type.Array(Type.Object({ leak_type: Type.String(), sightings: Type.Integer(), leaks: Type.Integer() })),
  by_filter: Type.Array(Type.Object({ filter_id: Type.Integer(), name: Type.String(), count: Type.Integer() })),
  newest: Type.Array(Sighting, { description: 'The 10 newest sightings' }),
});

const EmailReport = Type.Object({
  email: Type.String(),
  total_sightings: Type.Integer(),
  leaks: Type.Array(
    Type.Object({
      leak_name: Type.String(),
      leak_type: Type.String(),
      sightings: Type.Integer(),
      first_seen: Type.String({ format: 'date-time' }),
      last_seen: Type.String({ format: 'date-time' }),
    }),
  ),
  sites: Type.Array(Type.Object({ host: Type.String(), sightings: Type.Integer() }), {
    description: 'Sites the address was used on, most sightings first',
  }),
  newest: Type.Array(Sighting, { description: 'The 50 newest sightings' }),
});

const Account = Type.Object({
  login: Type.String(),
  email: Nullable(Type.String()),
  domain: Nullable(Type.String()),
  login_domain: Nullable(Type.String()),
  url: Nullable(Type.String()),
  password: Type.String({ description: 'Masked' }),
  password_type: Type.String({ description: 'plain or hash' }),
  hash_type: Nullable(Type.String()),
  occurrences: Type.Integer({ description: 'Leaks the credential was seen in' }),
  first_seen: Type.String({ format: 'date-time' }),
  last_seen: Type.String({ format: 'date-time' }),
});

const LimitEntry = Type.Object({
  period: Type.String(),
  limit: Type.Integer(),
  used: Type.Integer(),
  remaining: Type.Integer(),
  reset_seconds: Type.Integer(),
});

const Capacity = Type.Object({
  services: Type.Array(Type.Object({ service_slug: Type.String(), limits: Type.Array(LimitEntry) })),
  account: Type.Array(LimitEntry),
  load: Type.Object({
    queued_jobs: Type.Integer({ description: 'Background jobs (async rule runs) waiting' }),
    running_jobs: Type.Integer(),
    pending_matches: Type.Integer({
      description: "This organization's matches still being filled by a background job",
    }),
  }),
});

export function quickSearchRoutes(deps: {
  leaks: LeakQueries;
  limiter: RateLimiter;
  limits: LimitResolver;
  capacity: QuickSearchRepository;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/service/domain_quick_search/',
      {
        schema: {
          operationId: 'domainQuickSearch',
          tags: [TAG],
          summary:
            'What the credential store knows of a domain: counts by source, leak type and filter, newest sightings',
          querystring: Type.Object({ domain: Type.String({ minLength: 1, maxLength: 253 }), org_id: OrgIdQuery }),
          response: withErrors({ 200: DomainReport }, [400, 401, 403, 404, 429]),
        },
        config: { rateLimit: { service: 'domain_quick_search', name: 'Domain quick search' } },
      },
      (request) => {
        requireAuth(request);
        return deps.leaks.domain(request.query.domain);
      },
    );

    app.get(
      '/service/email_quick_search/',
      {
        schema: {
          operationId: 'emailQuickSearch',
          tags: [TAG],
          summary: 'One email address: the leaks it is in, when, and on which sites (passwords masked)',
          querystring: Type.Object({ email: Type.String({ minLength: 3, maxLength: 320 }), org_id: OrgIdQuery }),
          response: withErrors({ 200: EmailReport }, [400, 401, 403, 404, 429]),
        },
        config: { rateLimit: { service: 'email_quick_search', name: 'Email quick search' } },
      },
      (request) => {
        requireAuth(request);
        return deps.leaks.email(request.query.email);
      },
    );

    app.get(
      '/service/accounts_database_search/',
      {
        schema: {
          operationId: 'accountsDatabaseSearch',
          tags: [TAG],
          summary: 'Distinct credentials matching every given field, newest first, paged',
          querystring: Type.Object({
            login: Type.Optional(
              Type.String({ minLength: 1, maxLength: 320, description: 'The login, exactly (case-insensitive)' }),
            ),
            domain: Type.Optional(
              Type.String({
                minLength: 1,
                maxLength: 253,
                description: 'Registrable domain of the site or of the email login',
              }),
            ),
            url: Type.Optional(Type.String({ minLength: 3, maxLength: 2048, description: 'Part of the URL' })),
            password_sha1_prefix: Type.Optional(
              Type.String({
                pattern: '^[0-9a-fA-F]{5}$',
                description: "The first 5 hex digits of the password's SHA-1 (a range, as HIBP's)",
              }),
            ),
            page: Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 }),
            page_size: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
            org_id: OrgIdQuery,
          }),
          response: withErrors(
            {
              200: Type.Object({
                count: Type.Integer(),
                next: Nullable(Type.String()),
                previous: Nullable(Type.String()),
                results: Type.Array(Account),
              }),
            },
            [400, 401, 403, 404, 429],
          ),
        },
        config: { rateLimit: { service: 'accounts_database_search', name: 'Accounts database search' } },
      },
      async (request) => {
        requireAuth(request);
        const { page, page_size: pageSize, org_id: orgId, ...fields } = request.query;
        const { total, results } = await deps.leaks.accounts(fields, pageWindow({ page, page_size: pageSize }));
        return linkedPage('/service/accounts_database_search/', { page, page_size: pageSize }, total, results, {
          ...fields,
          org_id: orgId,
        });
      },
    );

    app.get(
      '/service/live_search_capacity/',
      {
        schema: {
          operationId: 'liveSearchCapacity',
          tags: [TAG],
          summary: "The quick searches' remaining quota and the background work now queued or running",
          querystring: Type.Object({ org_id: OrgIdQuery }),
          response: withErrors({ 200: Capacity }, [400, 401, 403, 404, 429]),
        },
        config: { rateLimit: { service: 'live_search_capacity', name: 'Live search capacity' } },
      },
      async (request) => {
        const { orgId } = requireAuth(request);
        const services = await Promise.all(
          QUICK_SEARCH_SLUGS.map(async (slug) => ({
            service_slug: slug,
            limits: await deps.limiter.usage(orgId, await deps.limits.service(orgId, slug)),
          })),
        );
        const account = await deps.limiter.usage(orgId, await deps.limits.account(orgId));
        return { services, account, load: await deps.capacity.backgroundLoad(orgId) };
      },
    );
  };
}
