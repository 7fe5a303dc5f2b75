import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireAuth } from '../../http/auth.plugin.ts';
import { IdInteger, MAX_PAGE, Nullable, withErrors } from '../../http/schemas.ts';
import { requestOrigin, type AuditLog } from '../audit/index.ts';
import { MAX_PREVIEW_DAYS, type RuleSteering } from './rule-steering.ts';
import { Match } from './rule.schemas.ts';

const TAG = 'monitoring rules';
const IdParams = Type.Object({ id: IdInteger() });

const PauseState = Type.Object({
  rule_id: Type.Integer(),
  is_paused: Type.Boolean({ description: 'true: the scheduler does not run the rule' }),
  paused_at: Nullable(Type.String({ format: 'date-time' })),
  paused_by: Nullable(Type.Integer({ description: 'The user who paused it' })),
});

const RunNowResult = Type.Object({
  rule_id: Type.Integer(),
  ran: Type.Boolean({ description: 'false when another worker was running the same window' }),
  window_start: Nullable(Type.String({ format: 'date-time', description: "The rule's last run before this one" })),
  window_end: Type.String({ format: 'date-time' }),
  match: Nullable(Match, { description: 'The match recorded (pending for an async source); null: nothing new found' }),
});

const PreviewBody = Type.Object(
  {
    rule_id: Type.Optional(IdInteger({ description: 'A stored rule: its source, args and exclusions' })),
    service: Type.Optional(IdInteger({ description: 'Or a catalog service id with args, as create takes them' })),
    args: Type.Optional(Type.Unknown({ description: "Must satisfy the service's args_schema" })),
    from: Type.String({ maxLength: 64, description: 'Window start (exclusive), ISO 8601' }),
    to: Type.String({
      maxLength: 64,
      description: `Window end (inclusive), ISO 8601; at most ${MAX_PREVIEW_DAYS} days after from, not in the future`,
    }),
    page: Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 }),
    page_size: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  },
  { additionalProperties: false },
);

const PreviewResult = Type.Object({
  count: Type.Integer({ description: 'Every hit in the window' }),
  page: Type.Integer(),
  page_size: Type.Integer(),
  from: Type.String({ format: 'date-time' }),
  to: Type.String({ format: 'date-time' }),
  results: Type.Array(
    Type.Object(
      { is_excluded: Type.Boolean({ description: "Under the rule's exclusions" }), hit_key: Type.String() },
      { additionalProperties: true },
    ),
  ),
});

/** Pause, resume, run now and preview (beyond the spec: docs/api.md "Pause, run now, preview"). */
export function ruleSteeringRoutes(deps: { steering: RuleSteering; audit: AuditLog }): FastifyPluginAsyncTypebox {
  const { steering, audit } = deps;
  return async (app) => {
    for (const [action, paused] of [
      ['pause', true],
      ['resume', false],
    ] as const) {
      app.post(
        `/service/alert_system_rule_${action}/:id/`,
        {
          schema: {
            operationId: paused ? 'pauseAlertRule' : 'resumeAlertRule',
            tags: [TAG],
            summary: paused
              ? 'Pause a rule: the scheduler passes it over until it is resumed (beyond the spec)'
              : 'Resume a paused rule: its next run covers everything since its last run (beyond the spec)',
            params: IdParams,
            response: withErrors({ 200: PauseState }, [400, 401, 404, 409, 429]),
          },
        },
        async (request) => {
          const auth = requireAuth(request);
          const { rule, state, changed } = await steering.setPaused(
            { orgId: auth.orgId, userId: auth.user.id },
            request.params.id,
            paused,
          );
          // A paused rule sends no alerts: who stopped them, and who started them again, is kept.
          if (changed)
            await audit.record({
              ...requestOrigin(request),
              event: paused ? 'rule.paused' : 'rule.resumed',
              target: { type: 'rule', id: Number(rule.id), name: rule.name },
              details: { service_id: Number(rule.service_id) },
            });
          return state;
        },
      );
    }

    app.get(
      '/service/alert_system_rule_pause_state/:id/',
      {
        schema: {
          operationId: 'getAlertRulePauseState',
          tags: [TAG],
          summary: 'Whether a rule is paused, since when and by whom (beyond the spec)',
          params: IdParams,
          response: withErrors({ 200: PauseState }, [400, 401, 404, 429]),
        },
      },
      (request) => steering.pauseState(requireAuth(request).orgId, request.params.id),
    );

    app.get(
      '/service/alert_system_rule_paused_list/',
      {
        schema: {
          operationId: 'listPausedAlertRules',
          tags: [TAG],
          summary: "The organization's paused active rules (no pagination: bounded by its rule limit)",
          response: withErrors({ 200: Type.Array(PauseState) }, [401, 429]),
        },
      },
      (request) => steering.pausedRules(requireAuth(request).orgId),
    );

    app.post(
      '/service/alert_system_rule_run_now/:id/',
      {
        schema: {
          operationId: 'runAlertRuleNow',
          tags: [TAG],
          summary: 'Run a rule now over (last_run, now], as a scheduled run: its match notifies (beyond the spec)',
          params: IdParams,
          response: withErrors({ 200: RunNowResult }, [400, 401, 404, 409, 429, 503]),
        },
      },
      (request) => {
        const auth = requireAuth(request);
        return steering.runNow({ orgId: auth.orgId, userId: auth.user.id }, request.params.id);
      },
    );

    app.post(
      '/service/alert_system_rule_preview/',
      {
        // Nothing is stored or sent: an API key of scope read may preview.
        config: { readOnly: true },
        schema: {
          operationId: 'previewAlertRule',
          tags: [TAG],
          summary: "A rule's (or a rule body's) hits over a past window; nothing is stored or sent (beyond the spec)",
          body: PreviewBody,
          response: withErrors({ 200: PreviewResult }, [400, 401, 404, 429, 503]),
        },
      },
      (request) => steering.preview(requireAuth(request).orgId, request.body),
    );
  };
}
