import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { requireAuth } from '../../http/auth.plugin.ts';
import { IdInteger, MAX_PAGE, Nullable, withErrors } from '../../http/schemas.ts';
import { requestOrigin, type AuditLog } from '../audit/index.ts';
import { catalogRow, sourceCatalog } from '../sources/index.ts';
import type { MatchService } from './match.service.ts';
import type { RuleRunner } from './rule-runner.ts';
import { CatalogRow, Match, Rule, RuleBody, RuleListQuery } from './rule.schemas.ts';
import type { RuleService } from './rule.service.ts';
import { ruleSteeringRoutes } from './rule-steering.routes.ts';
import type { RuleSteering } from './rule-steering.ts';

const TAG = 'monitoring rules';
const IdParams = Type.Object({ id: IdInteger() });
const Page = {
  page: Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 }),
  page_size: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
};
const Linked = (item: ReturnType<typeof Type.Object>) =>
  Type.Object({
    count: Type.Integer(),
    next: Nullable(Type.String()),
    previous: Nullable(Type.String()),
    results: Type.Array(item),
  });

const Exclusion = Type.Object({
  id: Type.Integer(),
  rule_id: Type.Integer(),
  field: Type.String(),
  value: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
});
const Hit = Type.Object(
  {
    id: Type.Integer(),
    is_excluded: Type.Boolean(),
    hit_key: Type.String({
      description: 'Identifies the hit within its source: an exclusion {field: "hit_key", value} excludes this one hit',
    }),
  },
  { additionalProperties: true },
);

const MAX_CONTEXT_POSTS = 50;

const HitContextView = Type.Object({
  hit_id: Type.Integer(),
  title: Type.String({ description: 'The channel or thread, as a person names it' }),
  posts: Type.Array(
    Type.Object({
      id: Type.String({ description: "The post's id in its conversation (a message or post id)" }),
      author: Nullable(Type.String()),
      date: Nullable(Type.String({ format: 'date-time' })),
      text: Type.String(),
      is_hit: Type.Boolean(),
    }),
  ),
});

/** The catalog, and the life of a rule: create (with its first run), read, replace, delete, restore. */
function ruleLifecycleRoutes(deps: {
  rules: RuleService;
  runner: RuleRunner;
  audit: AuditLog;
}): FastifyPluginAsyncTypebox {
  const { rules, runner, audit } = deps;
  // A deleted rule stops alerting: who did that, and who brought it back, goes in the audit log.
  const auditRule = (
    request: FastifyRequest,
    event: 'rule.deleted' | 'rule.restored',
    rule: { id: number; name: string; service_id: number },
  ) =>
    audit.record({
      ...requestOrigin(request),
      event,
      target: { type: 'rule', id: rule.id, name: rule.name },
      details: { service_id: rule.service_id },
    });
  return async (app) => {
    app.get(
      '/service/alert_system_service_get_service_list/',
      {
        schema: {
          operationId: 'listAlertServices',
          tags: [TAG],
          summary: 'The catalog of monitorable sources (no pagination)',
          response: withErrors({ 200: Type.Array(CatalogRow) }, [401, 429]),
        },
      },
      () => sourceCatalog.map(catalogRow),
    );

    app.post(
      '/service/alert_system_alert_create_alert_rule/',
      {
        schema: {
          operationId: 'createAlertRule',
          tags: [TAG],
          summary: 'Create a monitoring rule; it runs once at once',
          body: RuleBody,
          response: withErrors({ 201: Rule }, [400, 401, 429]),
        },
      },
      async (request, reply) => {
        const auth = requireAuth(request);
        const created = await rules.create({ orgId: auth.orgId, userId: auth.user.id }, request.body);
        // spec 3.3.1: the first run happens now; the response shows its outcome (last_run, counts).
        await runner.runNow(created);
        return reply.code(201).send(await rules.viewOf(await rules.load(auth.orgId, Number(created.id))));
      },
    );

    app.get(
      '/service/alert_system_alert_get_alert_rule_list/',
      {
        schema: {
          operationId: 'listAlertRules',
          tags: [TAG],
          summary: 'Monitoring rules, paged through next',
          querystring: RuleListQuery,
          response: withErrors({ 200: Linked(Rule) }, [400, 401, 429]),
        },
      },
      (request) => rules.list(requireAuth(request).orgId, request.query),
    );

    app.get(
      '/service/alert_system_alert_get_alert_rule/:id/',
      {
        schema: {
          operationId: 'getAlertRule',
          tags: [TAG],
          summary: 'One monitoring rule, deleted ones included (beyond the spec)',
          params: IdParams,
          response: withErrors({ 200: Rule }, [400, 401, 404, 429]),
        },
      },
      async (request) => rules.viewOf(await rules.load(requireAuth(request).orgId, request.params.id)),
    );

    app.put(
      '/service/alert_system_alert_update_alert_rule/:id/',
      {
        schema: {
          operationId: 'updateAlertRule',
          tags: [TAG],
          summary: 'Replace a monitoring rule (full body, same validation as create)',
          params: IdParams,
          body: RuleBody,
          response: withErrors({ 200: Rule }, [400, 401, 404, 409, 429]),
        },
      },
      async (request) => {
        const auth = requireAuth(request);
        return rules.viewOf(
          await rules.update({ orgId: auth.orgId, userId: auth.user.id }, request.params.id, request.body),
        );
      },
    );

    app.delete(
      '/service/alert_system_alert_delete_alert_rule/:id/',
      {
        schema: {
          operationId: 'deleteAlertRule',
          tags: [TAG],
          summary: 'Soft-delete a rule: snapshot it, then detach its delivery resources and exclusions',
          params: IdParams,
          response: withErrors({ 200: Rule }, [400, 401, 404, 429]),
        },
      },
      async (request) => {
        const auth = requireAuth(request);
        const deleted = await rules.softDelete({ orgId: auth.orgId, userId: auth.user.id }, request.params.id);
        await auditRule(request, 'rule.deleted', deleted);
        return rules.viewOf(deleted);
      },
    );

    app.post(
      '/service/alert_system_alert_restore_alert_rule/:id/',
      {
        schema: {
          operationId: 'restoreAlertRule',
          tags: [TAG],
          summary: 'Restore a deleted rule from its deletion snapshot (beyond the spec)',
          params: IdParams,
          response: withErrors({ 200: Rule }, [400, 401, 404, 409, 429]),
        },
      },
      async (request) => {
        const auth = requireAuth(request);
        const restored = await rules.restore({ orgId: auth.orgId, userId: auth.user.id }, request.params.id);
        await auditRule(request, 'rule.restored', restored);
        return rules.viewOf(restored);
      },
    );
  };
}

function matchRoutes(matches: MatchService, audit: AuditLog): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/service/alert_system_match_get_match_list/:id/',
      {
        schema: {
          operationId: 'listMatches',
          tags: [TAG],
          summary: "A rule's matches (one per run with new hits), newest first",
          params: IdParams,
          querystring: Type.Object(Page),
          response: withErrors({ 200: Linked(Match) }, [400, 401, 404, 429]),
        },
      },
      (request) => matches.listMatches(requireAuth(request).orgId, request.params.id, request.query),
    );

    app.get(
      '/service/alert_system_match_get_match/:id/',
      {
        schema: {
          operationId: 'getMatch',
          tags: [TAG],
          summary: 'One match',
          params: IdParams,
          response: withErrors({ 200: Match }, [400, 401, 404, 429]),
        },
      },
      (request) => matches.getMatch(requireAuth(request).orgId, request.params.id),
    );

    app.get(
      '/service/alert_system_match_get_match_hits/:id/',
      {
        schema: {
          operationId: 'listMatchHits',
          tags: [TAG],
          summary: "A match's hits, filtered and sorted by the source's filterable and sortable fields",
          params: IdParams,
          querystring: Type.Object({
            ...Page,
            filter: Type.Optional(
              Type.Array(Type.String({ maxLength: 500 }), { description: 'field:value (repeatable)' }),
            ),
            sort: Type.Optional(
              Type.String({ maxLength: 100, description: 'A sortable field; -field for descending (default -date)' }),
            ),
            include_excluded: Type.Boolean({ default: true }),
          }),
          response: withErrors({ 200: Linked(Hit) }, [400, 401, 404, 429]),
        },
      },
      (request) => matches.listHits(requireAuth(request).orgId, request.params.id, request.query),
    );

    app.get(
      '/service/alert_system_match_hit_context/:id/',
      {
        schema: {
          operationId: 'getMatchHitContext',
          tags: [TAG],
          summary:
            'The posts around a hit in its channel or thread (messenger, chat servers, forums), oldest first, the hit among them',
          params: IdParams,
          querystring: Type.Object({
            before: Type.Integer({ minimum: 0, maximum: MAX_CONTEXT_POSTS, default: 10 }),
            after: Type.Integer({ minimum: 0, maximum: MAX_CONTEXT_POSTS, default: 10 }),
          }),
          response: withErrors({ 200: HitContextView }, [400, 401, 404, 429]),
        },
      },
      (request) => matches.hitContext(requireAuth(request).orgId, request.params.id, request.query),
    );

    app.post(
      '/service/alert_system_match_hit_reveal/:id/',
      {
        schema: {
          operationId: 'revealMatchHit',
          tags: [TAG],
          summary: "A hit's secret fields in clear (a leaked password); recorded in the audit log",
          params: IdParams,
          response: withErrors(
            {
              200: Type.Object({
                id: Type.Integer(),
                match_id: Type.Integer(),
                fields: Type.Record(Type.String(), Type.Unknown(), {
                  description: 'The secret fields by name, e.g. {password}',
                }),
              }),
            },
            [400, 401, 404, 429],
          ),
        },
      },
      async (request) => {
        const { rule, hit } = await matches.revealHit(requireAuth(request).orgId, request.params.id);
        // Who saw a leaked password, and when, is what an incident review asks first.
        await audit.record({
          ...requestOrigin(request),
          event: 'hit.revealed',
          target: { type: 'rule', id: Number(rule.id), name: rule.name },
          details: { match_id: hit.match_id, hit_id: hit.id, fields: Object.keys(hit.fields).join(',') },
        });
        return hit;
      },
    );
  };
}

function exclusionRoutes(matches: MatchService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/service/alert_system_exclusion_create/:id/',
      {
        schema: {
          operationId: 'createExclusion',
          tags: [TAG],
          summary:
            'Exclude hits of a rule whose field equals a value (case-insensitive), or one hit (field hit_key); counts change at once',
          params: IdParams,
          body: Type.Object(
            {
              field: Type.String({ minLength: 1, maxLength: 100 }),
              value: Type.String({ minLength: 1, maxLength: 1000 }),
            },
            { additionalProperties: false },
          ),
          response: withErrors({ 201: Exclusion }, [400, 401, 404, 409, 429]),
        },
      },
      async (request, reply) =>
        reply
          .code(201)
          .send(await matches.createExclusion(requireAuth(request).orgId, request.params.id, request.body)),
    );

    app.get(
      '/service/alert_system_exclusion_list/:id/',
      {
        schema: {
          operationId: 'listExclusions',
          tags: [TAG],
          summary: "A rule's exclusions",
          params: IdParams,
          response: withErrors({ 200: Type.Array(Exclusion) }, [400, 401, 404, 429]),
        },
      },
      (request) => matches.listExclusions(requireAuth(request).orgId, request.params.id),
    );

    app.delete(
      '/service/alert_system_exclusion_delete/:id/',
      {
        schema: {
          operationId: 'deleteExclusion',
          tags: [TAG],
          summary: 'Delete an exclusion; its hits count again',
          params: IdParams,
          response: withErrors({ 204: Type.Null() }, [400, 401, 404, 429]),
        },
      },
      async (request, reply) => {
        await matches.deleteExclusion(requireAuth(request).orgId, request.params.id);
        return reply.code(204).send(null);
      },
    );
  };
}

export function ruleRoutes(deps: {
  rules: RuleService;
  runner: RuleRunner;
  matches: MatchService;
  steering: RuleSteering;
  audit: AuditLog;
}): FastifyPluginAsyncTypebox {
  return async (app) => {
    await app.register(ruleLifecycleRoutes(deps));
    await app.register(matchRoutes(deps.matches, deps.audit));
    await app.register(exclusionRoutes(deps.matches));
    await app.register(ruleSteeringRoutes(deps));
  };
}
