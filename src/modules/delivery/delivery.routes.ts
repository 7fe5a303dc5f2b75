import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync, FastifyRequest, RouteShorthandOptions } from 'fastify';
import { requireAuth } from '../../http/auth.plugin.ts';
import { IdInteger, withErrors } from '../../http/schemas.ts';
import { linkedPage, pageWindow } from '../../lib/pagination.ts';
import { requestOrigin, type AuditEventName, type AuditLog } from '../audit/index.ts';
import {
  DeliveryAttempt,
  IdParams,
  LinkedPage,
  PageQuery,
  Recipient,
  RecipientBody,
  Sender,
  SenderBody,
  SiemTarget,
  SiemTargetBody,
  Template,
  TemplateBody,
  TestEmailBody,
  Webhook,
  WebhookBody,
} from './delivery.schemas.ts';
import type { DeliveryService } from './delivery.service.ts';

const PREFIX = '/service/alert_system_setting_';
/** Widens route options so the generic resource routes are not inferred from their schemas. */
const options = (value: RouteShorthandOptions): RouteShorthandOptions => value;
const TAG = 'delivery settings';

interface ResourceSpec<Item extends TSchema, Body extends TObject> {
  /** recipient → get_recipient_list, create_recipient, … (spec 4.4) */
  name: string;
  /** The operationIds' noun, when not the name capitalized (SiemTarget). */
  title?: string;
  item: Item;
  body: Body;
  service: {
    list(orgId: number, page: { offset: number; limit: number }): Promise<{ results: Static<Item>[]; total: number }>;
    create(orgId: number, input: Static<Body>): Promise<Static<Item>>;
    update?(orgId: number, id: number, input: Static<Body>): Promise<Static<Item>>;
    delete(orgId: number, id: number): Promise<void>;
  };
  /** Changes go to the audit log (senders hold SMTP credentials, webhooks a signing secret). */
  audit?: {
    events: { created: AuditEventName; updated?: AuditEventName; deleted: AuditEventName };
    record(request: FastifyRequest, event: AuditEventName, id: number, item?: Static<Item>): Promise<void>;
  };
}

/** The list/create/update/delete operations of one delivery resource at spec 4.4's paths. */
function resourceRoutes<Item extends TSchema, Body extends TObject>(
  spec: ResourceSpec<Item, Body>,
): FastifyPluginAsync {
  const title = spec.title ?? spec.name[0]!.toUpperCase() + spec.name.slice(1);
  // One generic route set for four resources: the schemas still validate and serialize every
  // request; only the compile-time inference is given up, hence the typed casts below.
  type Page = Static<typeof PageQuery>;
  type Params = Static<typeof IdParams>;
  return async (app) => {
    const listPath = `${PREFIX}get_${spec.name}_list/`;
    app.get(
      listPath,
      options({
        schema: {
          operationId: `list${title}s`,
          tags: [TAG],
          summary: `The organization's ${spec.name}s`,
          querystring: PageQuery,
          response: withErrors({ 200: LinkedPage(spec.item) }, [400, 401, 429]),
        },
      }),
      async (request) => {
        const query = request.query as Page;
        const { results, total } = await spec.service.list(requireAuth(request).orgId, pageWindow(query));
        return linkedPage(listPath, query, total, results);
      },
    );

    app.post(
      `${PREFIX}create_${spec.name}/`,
      options({
        schema: {
          operationId: `create${title}`,
          tags: [TAG],
          summary: `Create a ${spec.name}`,
          body: spec.body,
          response: withErrors({ 201: spec.item }, [400, 401, 409, 429]),
        },
      }),
      async (request, reply) => {
        const created = await spec.service.create(requireAuth(request).orgId, request.body as Static<Body>);
        if (spec.audit)
          await spec.audit.record(request, spec.audit.events.created, (created as { id: number }).id, created);
        return reply.code(201).send(created);
      },
    );

    const update = spec.service.update;
    if (update) {
      app.put(
        `${PREFIX}update_${spec.name}/:id/`,
        options({
          schema: {
            operationId: `update${title}`,
            tags: [TAG],
            summary: `Replace a ${spec.name}`,
            params: IdParams,
            body: spec.body,
            response: withErrors({ 200: spec.item }, [400, 401, 404, 409, 429]),
          },
        }),
        async (request) => {
          const { id } = request.params as Params;
          const updated = await update(requireAuth(request).orgId, id, request.body as Static<Body>);
          if (spec.audit?.events.updated) await spec.audit.record(request, spec.audit.events.updated, id, updated);
          return updated;
        },
      );
    }

    app.delete(
      `${PREFIX}delete_${spec.name}/:id/`,
      options({
        schema: {
          operationId: `delete${title}`,
          tags: [TAG],
          summary: `Delete a ${spec.name} (not while an active rule uses it)`,
          params: IdParams,
          response: withErrors({ 204: Type.Null({ description: 'Deleted' }) }, [400, 401, 403, 404, 409, 429]),
        },
      }),
      async (request, reply) => {
        const { id } = request.params as Params;
        await spec.service.delete(requireAuth(request).orgId, id);
        if (spec.audit) await spec.audit.record(request, spec.audit.events.deleted, id);
        return reply.code(204).send();
      },
    );
  };
}

/** SIEM targets (docs/siem.md): the resource's operations and a test send. */
function siemTargetRoutes(deps: {
  delivery: DeliveryService;
  audit: AuditLog;
  dashboardUrl: (orgId: number) => Promise<string>;
}): FastifyPluginAsyncTypebox {
  const { delivery, audit } = deps;
  const auditSiemTarget = {
    events: { created: 'siem_target.created', updated: 'siem_target.updated', deleted: 'siem_target.deleted' },
    record: (request: FastifyRequest, event: AuditEventName, id: number, target?: Static<typeof SiemTarget>) =>
      audit.record({
        ...requestOrigin(request),
        event,
        target: { type: 'siem_target', id, name: target?.name ?? null },
        details: target ? { kind: target.kind, host: target.url ? new URL(target.url).host : target.host } : {},
      }),
  } as const;
  return async (app) => {
    await app.register(
      resourceRoutes({
        name: 'siem_target',
        title: 'SiemTarget',
        item: SiemTarget,
        body: SiemTargetBody,
        service: delivery.siemTargets,
        audit: auditSiemTarget,
      }),
    );
    app.post(
      `${PREFIX}test_siem_target/:id/`,
      {
        schema: {
          operationId: 'sendTestSiemEvent',
          tags: [TAG],
          summary: 'Send one sample event to a SIEM target now; returns the recorded attempt',
          params: IdParams,
          response: withErrors({ 200: DeliveryAttempt }, [400, 401, 404, 429]),
        },
      },
      async (request) => {
        const { orgId } = requireAuth(request);
        return delivery.testSiemTarget(orgId, request.params.id, await deps.dashboardUrl(orgId));
      },
    );
  };
}

export function deliveryRoutes(deps: {
  delivery: DeliveryService;
  audit: AuditLog;
  dashboardUrl: (orgId: number) => Promise<string>;
}): FastifyPluginAsyncTypebox {
  const { delivery, audit } = deps;
  // What an audit entry keeps of a sender or webhook: never its credentials, secret, headers or
  // URL path (a Slack or Teams webhook URL is itself a secret), only names and hosts.
  // Senders cannot be changed in place (spec 4.4): a new password is a new sender.
  const auditSender = {
    events: { created: 'sender.created', deleted: 'sender.deleted' },
    record: (request: FastifyRequest, event: AuditEventName, id: number, sender?: Static<typeof Sender>) =>
      audit.record({
        ...requestOrigin(request),
        event,
        target: { type: 'sender', id, name: sender?.email ?? null },
        details: sender
          ? { server_host: sender.server_host, authentication_required: sender.authentication_required }
          : {},
      }),
  } as const;
  const auditWebhook = {
    events: { created: 'webhook.created', updated: 'webhook.updated', deleted: 'webhook.deleted' },
    record: (request: FastifyRequest, event: AuditEventName, id: number, webhook?: Static<typeof Webhook>) =>
      audit.record({
        ...requestOrigin(request),
        event,
        target: { type: 'webhook', id, name: webhook?.name ?? null },
        details: webhook ? { host: new URL(webhook.url).host } : {},
      }),
  } as const;
  return async (app) => {
    await app.register(siemTargetRoutes(deps));
    await app.register(
      resourceRoutes({ name: 'recipient', item: Recipient, body: RecipientBody, service: delivery.recipients }),
    );
    await app.register(
      resourceRoutes({ name: 'sender', item: Sender, body: SenderBody, service: delivery.senders, audit: auditSender }),
    );
    await app.register(
      resourceRoutes({ name: 'template', item: Template, body: TemplateBody, service: delivery.templates }),
    );
    await app.register(
      resourceRoutes({
        name: 'webhook',
        item: Webhook,
        body: WebhookBody,
        service: delivery.webhooks,
        audit: auditWebhook,
      }),
    );

    app.post(
      `${PREFIX}test_email/`,
      {
        schema: {
          operationId: 'sendTestEmail',
          tags: [TAG],
          summary: 'Send a test email through a sender; answers 202 at once and sends in the background',
          body: TestEmailBody,
          response: withErrors(
            { 202: Type.Object({ message: Type.String(), sender_id: Type.Integer(), recipient: Type.String() }) },
            [400, 401, 404, 429],
          ),
        },
      },
      async (request, reply) => {
        const { orgId } = requireAuth(request);
        const queued = await delivery.queueTestEmail(
          orgId,
          request.body.sender_id,
          request.body.recipient,
          await deps.dashboardUrl(orgId),
        );
        return reply.code(202).send(queued);
      },
    );

    app.post(
      `${PREFIX}test_webhook/:id/`,
      {
        schema: {
          operationId: 'sendTestWebhook',
          tags: [TAG],
          summary: 'Send a sample notification to a webhook now; returns the recorded attempt',
          params: IdParams,
          response: withErrors({ 200: DeliveryAttempt }, [400, 401, 404, 429]),
        },
      },
      async (request) => {
        const { orgId } = requireAuth(request);
        return delivery.testWebhook(orgId, request.params.id, await deps.dashboardUrl(orgId));
      },
    );

    const attemptsPath = `${PREFIX}get_delivery_attempt_list/`;
    app.get(
      attemptsPath,
      {
        schema: {
          operationId: 'listDeliveryAttempts',
          tags: [TAG],
          summary: 'Every email and webhook delivery attempt, newest first',
          querystring: Type.Composite([
            PageQuery,
            Type.Object({
              channel: Type.Optional(
                Type.Union([
                  Type.Literal('email'),
                  Type.Literal('webhook'),
                  Type.Literal('splunk_hec'),
                  Type.Literal('syslog'),
                ]),
              ),
              status: Type.Optional(Type.Union([Type.Literal('success'), Type.Literal('failed')])),
              rule_id: Type.Optional(IdInteger()),
            }),
          ]),
          response: withErrors({ 200: LinkedPage(DeliveryAttempt) }, [400, 401, 429]),
        },
      },
      async (request) => {
        const { channel, status, rule_id: ruleId } = request.query;
        const { results, total } = await delivery.attempts.list(requireAuth(request).orgId, {
          channel,
          status,
          ruleId,
          ...pageWindow(request.query),
        });
        return linkedPage(attemptsPath, request.query, total, results, { channel, status, rule_id: ruleId });
      },
    );
  };
}
