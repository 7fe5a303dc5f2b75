import type { Kysely, Selectable, Transaction } from 'kysely';
import type { AlertRuleTable, Database } from '../../db/schema.ts';
import { HOUR_MS, type Clock } from '../../lib/clock.ts';
import { AppError, conflict, isUniqueViolation, notFound, type FieldError } from '../../lib/errors.ts';
import { linkedPage, pageWindow } from '../../lib/pagination.ts';
import type { DeliveryKind } from '../delivery/index.ts';
import type { OrganizationService } from '../orgs/index.ts';
import type { FollowUpTokens } from '../search/index.ts';
import { findSource, normalizeArgs, validateArgs, type SourceContext, type SourceDefinition } from '../sources/index.ts';
import { frequencyHours, isFrequency, type Frequency } from '../../lib/frequency.ts';
import { lockRule as lockRuleRow } from './rule-lock.ts';
import { isoDateOrNull as iso } from '../../lib/iso-date.ts';

export type RuleRow = Selectable<AlertRuleTable>;
type Executor = Kysely<Database> | Transaction<Database>;

export interface RuleInput {
  name: string;
  service?: number;
  args?: unknown;
  sender?: number | null;
  email_template: number;
  recipients?: number[];
  webhook?: number | null;
  frequency?: string;
  follow_up_token?: string;
}

export interface RuleContext {
  orgId: number;
  userId: number;
}

/** How long workers wait for a new rule's first run (the creating request's) before running it. */
const FIRST_RUN_GRACE_MS = 10 * 60_000;

/** The slower of the rule's frequency and the source's floor (spec 3.4). */
export const effectiveHours = (rule: { frequency: string }, source: SourceDefinition): number =>
  Math.max(frequencyHours[rule.frequency as Frequency] ?? 24, frequencyHours[source.frequency]);

function invalid(fields: FieldError[]): AppError {
  return new AppError('validation_failed', fields.map((f) => `${f.field}: ${f.message}`).join('; '), { fields });
}

export function createRuleService(deps: {
  db: Kysely<Database>;
  clock: Clock;
  context: SourceContext;
  organizations: OrganizationService;
  followUps: FollowUpTokens;
}) {
  const { db, clock } = deps;

  async function recipientIds(ruleIds: number[], executor: Executor = db): Promise<Map<number, number[]>> {
    const byRule = new Map<number, number[]>();
    if (ruleIds.length === 0) return byRule;
    const rows = await executor.selectFrom('alert_rule_recipients').selectAll().where('rule_id', 'in', ruleIds).orderBy('recipient_id').execute();
    for (const row of rows) byRule.set(Number(row.rule_id), [...(byRule.get(Number(row.rule_id)) ?? []), Number(row.recipient_id)]);
    return byRule;
  }

  const view = (row: RuleRow, recipients: number[]) => ({
    id: Number(row.id),
    name: row.name,
    service: Number(row.service_id),
    args: JSON.parse(row.args) as Record<string, unknown>,
    sender: row.sender_id === null ? null : Number(row.sender_id),
    email_template: row.email_template_id === null ? null : Number(row.email_template_id),
    recipients,
    webhook: row.webhook_id === null ? null : Number(row.webhook_id),
    frequency: row.frequency,
    total_alerts_count: Number(row.total_alerts_count),
    total_matches_count: Number(row.total_matches_count),
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
    last_run: iso(row.last_run),
    is_deleted: Number(row.is_deleted) === 1,
    deleted_at: iso(row.deleted_at),
    deleted_by: row.deleted_by === null ? null : Number(row.deleted_by),
    deletion_snapshot: row.deletion_snapshot ? (JSON.parse(row.deletion_snapshot) as Record<string, unknown>) : null,
  });

  async function load(orgId: number, id: number, executor: Executor = db): Promise<RuleRow> {
    const row = await executor.selectFrom('alert_rules').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
    if (!row) throw notFound('monitoring rule');
    return row;
  }

  async function viewOf(row: RuleRow, executor: Executor = db) {
    return view(row, (await recipientIds([Number(row.id)], executor)).get(Number(row.id)) ?? []);
  }

  const owned = async (table: 'senders' | 'email_templates' | 'webhooks' | 'recipients', orgId: number, ids: number[], allowShared = false) => {
    if (ids.length === 0) return new Set<number>();
    const rows = await db
      .selectFrom(table)
      .select('id')
      .where('id', 'in', ids)
      .where((eb) => (allowShared ? eb.or([eb('org_id', '=', orgId), eb('org_id', 'is', null)]) : eb('org_id', '=', orgId)))
      .execute();
    return new Set(rows.map((r) => Number(r.id)));
  };

  /** Spec 2.10 rules 1–5 and 7, the references and the name; rule 6 is checked on create. */
  async function validate(orgId: number, input: RuleInput, excludeRuleId?: number) {
    const fields: FieldError[] = [];
    let serviceId = input.service;
    let args = input.args;
    if (input.follow_up_token) {
      const followUp = await deps.followUps.verify(orgId, input.follow_up_token);
      if (serviceId !== undefined && serviceId !== 1) fields.push({ field: 'service', message: 'a follow_up_token starts a messenger rule (service 1)' });
      if (args !== undefined) fields.push({ field: 'args', message: 'comes from the follow_up_token; omit it' });
      serviceId = 1;
      args = followUp.args;
    }
    if (serviceId === undefined) throw invalid([{ field: 'service', message: 'is required' }]);
    const source = findSource(serviceId);
    if (!source) throw invalid([{ field: 'service', message: `${serviceId} is not a catalog service id` }]);
    if (args === undefined) args = {};

    for (const error of validateArgs(source, args)) fields.push({ ...error, message: `${error.message} (rule ${error.rule})` });
    const normalized = fields.length ? {} : normalizeArgs(source, args);
    if (!fields.length && source.checkStoredReferences) {
      for (const error of await source.checkStoredReferences(deps.context, normalized)) fields.push({ ...error, message: `${error.message} (rule ${error.rule})` });
    }

    const recipients = [...new Set(input.recipients ?? [])];
    const webhook = input.webhook ?? null;
    if (recipients.length === 0 && webhook === null) {
      fields.push({ field: 'recipients', message: 'set at least one recipient or a webhook (rule 5)', rule: 5 });
    }

    const org = await deps.organizations.get(orgId);
    // An omitted frequency is the organization's default, raised to the source's floor; one
    // the client names must respect the floor (rule 7).
    const frequency =
      input.frequency ??
      (isFrequency(org.default_frequency) && frequencyHours[org.default_frequency] < frequencyHours[source.frequency] ? source.frequency : org.default_frequency);
    if (!isFrequency(frequency)) {
      fields.push({ field: 'frequency', message: 'is not a known frequency' });
    } else if (frequencyHours[frequency] < frequencyHours[source.frequency]) {
      fields.push({ field: 'frequency', message: `${frequency} is faster than the ${source.alias} floor of ${source.frequency} (rule 7)`, rule: 7 });
    }

    const sender = input.sender ?? null;
    if (sender !== null && !(await owned('senders', orgId, [sender], true)).has(sender)) {
      fields.push({ field: 'sender', message: 'no such sender in this organization' });
    }
    if (!(await owned('email_templates', orgId, [input.email_template])).has(input.email_template)) {
      fields.push({ field: 'email_template', message: 'no such template in this organization' });
    }
    if (webhook !== null && !(await owned('webhooks', orgId, [webhook])).has(webhook)) {
      fields.push({ field: 'webhook', message: 'no such webhook in this organization' });
    }
    const known = await owned('recipients', orgId, recipients);
    const unknown = recipients.filter((id) => !known.has(id));
    if (unknown.length) fields.push({ field: 'recipients', message: `no such recipients in this organization: ${unknown.join(', ')}` });

    const name = input.name.trim();
    if (!name) fields.push({ field: 'name', message: 'must not be empty' });
    let clash = db.selectFrom('alert_rules').select('id').where('org_id', '=', orgId).where('is_deleted', '=', 0).where('name', '=', name);
    if (excludeRuleId !== undefined) clash = clash.where('id', '!=', excludeRuleId);
    if (name && (await clash.executeTakeFirst())) fields.push({ field: 'name', message: 'is already used by another active rule' });

    if (fields.length) throw invalid(fields);
    return { source, name, args: normalized, sender, template: input.email_template, recipients, webhook, frequency, org };
  }

  /** The editable columns of a validated rule body (create and update store the same). */
  const storedColumns = (valid: Awaited<ReturnType<typeof validate>>) => ({
    name: valid.name,
    service_id: valid.source.id,
    args: JSON.stringify(valid.args),
    sender_id: valid.sender,
    email_template_id: valid.template,
    webhook_id: valid.webhook,
    frequency: valid.frequency,
  });

  async function assertWithinLimit(orgId: number, limit: number, executor: Executor) {
    const { n } = await executor
      .selectFrom('alert_rules')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('org_id', '=', orgId)
      .where('is_deleted', '=', 0)
      .executeTakeFirstOrThrow();
    if (Number(n) >= limit) {
      throw invalid([{ field: 'alert_rule_limit', message: `the organization already has ${n} active rules, its limit (rule 6)`, rule: 6 }]);
    }
  }

  const setRecipients = async (tx: Transaction<Database>, ruleId: number, recipients: number[]) => {
    await tx.deleteFrom('alert_rule_recipients').where('rule_id', '=', ruleId).execute();
    if (recipients.length) await tx.insertInto('alert_rule_recipients').values(recipients.map((recipient_id) => ({ rule_id: ruleId, recipient_id }))).execute();
  };

  const lockRule = (tx: Transaction<Database>, orgId: number, id: number): Promise<RuleRow> => lockRuleRow(tx, deps.context.engine, orgId, id);

  /** A transaction of rule changes; a unique index that a concurrent change won is a 409, not a 500. */
  const changeRules = async <T>(work: (tx: Transaction<Database>) => Promise<T>): Promise<T> => {
    try {
      return await db.transaction().execute(work);
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict('another change to the same rule or name came first; read the rule again and retry');
      throw error;
    }
  };

  const lockOrg = async (tx: Transaction<Database>, orgId: number) => {
    // Serializes rule creation per organization on PostgreSQL (the rule limit and name checks).
    await tx.updateTable('organizations').set((eb) => ({ updated_at: eb.ref('updated_at') })).where('id', '=', orgId).execute();
  };

  return {
    view,
    viewOf,
    load,

    async create(context: RuleContext, input: RuleInput): Promise<RuleRow> {
      const valid = await validate(context.orgId, input);
      const now = clock.now().getTime();
      return changeRules(async (tx) => {
        await lockOrg(tx, context.orgId);
        await assertWithinLimit(context.orgId, valid.org.alert_rule_limit, tx);
        if (await tx.selectFrom('alert_rules').select('id').where('org_id', '=', context.orgId).where('is_deleted', '=', 0).where('name', '=', valid.name).executeTakeFirst()) {
          throw invalid([{ field: 'name', message: 'is already used by another active rule' }]);
        }
        const row = await tx
          .insertInto('alert_rules')
          .values({
            ...storedColumns(valid),
            org_id: context.orgId,
            created_by: context.userId,
            // spec 3.3.1: the first run is the creating request's (runNow); workers leave the
            // rule alone meanwhile, and run it themselves only if that never happened.
            due_at: now + FIRST_RUN_GRACE_MS,
            created_at: now,
            updated_at: now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        await setRecipients(tx, Number(row.id), valid.recipients);
        return row;
      });
    },

    /** PUT: full replacement with the same validation; the run history stays. */
    async update(context: RuleContext, id: number, input: RuleInput): Promise<RuleRow> {
      const existing = await load(context.orgId, id);
      if (Number(existing.is_deleted) === 1) throw new AppError('conflict', 'a deleted rule cannot be updated; restore it first');
      const valid = await validate(context.orgId, input, id);
      return changeRules(async (tx) => {
        const locked = await lockRule(tx, context.orgId, id);
        if (Number(locked.is_deleted) === 1) throw new AppError('conflict', 'a deleted rule cannot be updated; restore it first');
        // A new frequency or service moves when the rule next falls due.
        const dueAt = locked.last_run === null ? 0 : Number(locked.last_run) + effectiveHours(valid, valid.source) * HOUR_MS;
        const row = await tx
          .updateTable('alert_rules')
          .set({ ...storedColumns(valid), due_at: dueAt, updated_at: clock.now().getTime() })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        await setRecipients(tx, id, valid.recipients);
        return row;
      });
    },

    /** spec 3.2: snapshot the whole rule with its attachments, then detach them. */
    async softDelete(context: RuleContext, id: number): Promise<RuleRow> {
      const existing = await load(context.orgId, id);
      if (Number(existing.is_deleted) === 1) throw notFound('monitoring rule');
      return changeRules(async (tx) => {
        const locked = await lockRule(tx, context.orgId, id);
        if (Number(locked.is_deleted) === 1) throw notFound('monitoring rule');
        const recipients = (await recipientIds([id], tx)).get(id) ?? [];
        const exclusions = await tx.selectFrom('exclusions').select(['field', 'value', 'created_at']).where('rule_id', '=', id).execute();
        const snapshot = { ...view(locked, recipients), exclusions: exclusions.map((e) => ({ field: e.field, value: e.value })) };
        const now = clock.now().getTime();
        const row = await tx
          .updateTable('alert_rules')
          .set({
            is_deleted: 1,
            deleted_at: now,
            deleted_by: context.userId,
            deletion_snapshot: JSON.stringify(snapshot),
            sender_id: null,
            email_template_id: null,
            webhook_id: null,
            updated_at: now,
          })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        await tx.deleteFrom('alert_rule_recipients').where('rule_id', '=', id).execute();
        await tx.deleteFrom('exclusions').where('rule_id', '=', id).execute();
        return row;
      });
    },

    /**
     * Beyond the spec: bring a deleted rule back from its snapshot, re-attaching the delivery
     * resources that still exist; the same validation as create applies (name, limit, rule 5).
     */
    async restore(context: RuleContext, id: number): Promise<RuleRow> {
      const existing = await load(context.orgId, id);
      if (Number(existing.is_deleted) !== 1 || !existing.deletion_snapshot) throw new AppError('conflict', 'the rule is not deleted');
      const snapshot = JSON.parse(existing.deletion_snapshot) as ReturnType<typeof view> & { exclusions: { field: string; value: string }[] };
      const valid = await validate(context.orgId, {
        name: snapshot.name,
        service: snapshot.service,
        args: snapshot.args,
        sender: snapshot.sender,
        email_template: snapshot.email_template ?? 0,
        recipients: snapshot.recipients,
        webhook: snapshot.webhook,
        frequency: snapshot.frequency,
      });
      return changeRules(async (tx) => {
        await lockOrg(tx, context.orgId);
        // The snapshot read above must still be the rule's: a restore (or a restore and a new
        // delete) may have come first.
        const locked = await lockRule(tx, context.orgId, id);
        if (Number(locked.is_deleted) !== 1 || locked.deletion_snapshot !== existing.deletion_snapshot) throw new AppError('conflict', 'the rule is not deleted');
        await assertWithinLimit(context.orgId, valid.org.alert_rule_limit, tx);
        const now = clock.now().getTime();
        const row = await tx
          .updateTable('alert_rules')
          .set({
            is_deleted: 0,
            deleted_at: null,
            deleted_by: null,
            deletion_snapshot: null,
            sender_id: valid.sender,
            email_template_id: valid.template,
            webhook_id: valid.webhook,
            updated_at: now,
          })
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow();
        await setRecipients(tx, id, valid.recipients);
        for (const exclusion of snapshot.exclusions ?? []) {
          await tx.insertInto('exclusions').values({ org_id: context.orgId, rule_id: id, field: exclusion.field, value: exclusion.value, created_at: now }).execute();
        }
        return row;
      });
    },

    async list(orgId: number, query: { page: number; page_size: number; recipient_id?: number; sender_id?: number; email_template_id?: number; webhook_id?: number; include_deleted: boolean }) {
      let base = db.selectFrom('alert_rules').where('org_id', '=', orgId);
      if (!query.include_deleted) base = base.where('is_deleted', '=', 0);
      if (query.sender_id !== undefined) base = base.where('sender_id', '=', query.sender_id);
      if (query.email_template_id !== undefined) base = base.where('email_template_id', '=', query.email_template_id);
      if (query.webhook_id !== undefined) base = base.where('webhook_id', '=', query.webhook_id);
      if (query.recipient_id !== undefined) {
        const recipientId = query.recipient_id;
        base = base.where('id', 'in', (eb) => eb.selectFrom('alert_rule_recipients').select('rule_id').where('recipient_id', '=', recipientId));
      }
      const { total } = await base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
      const { offset, limit } = pageWindow(query);
      const rows = await base.selectAll().orderBy('id').offset(offset).limit(limit).execute();
      const recipients = await recipientIds(rows.map((r) => Number(r.id)));
      const results = rows.map((row) => view(row, recipients.get(Number(row.id)) ?? []));
      const { page: _page, page_size: _size, ...filters } = query;
      return linkedPage('/service/alert_system_alert_get_alert_rule_list/', query, Number(total), results, filters);
    },

    /** Active rules that use a delivery resource: they block its deletion (spec 3.5). */
    async referencing(orgId: number, kind: DeliveryKind, id: number, executor: Executor = db) {
      let query = executor.selectFrom('alert_rules').select(['id', 'name']).where('org_id', '=', orgId).where('is_deleted', '=', 0);
      if (kind === 'sender') query = query.where('sender_id', '=', id);
      if (kind === 'template') query = query.where('email_template_id', '=', id);
      if (kind === 'webhook') query = query.where('webhook_id', '=', id);
      if (kind === 'recipient') query = query.where('id', 'in', (eb) => eb.selectFrom('alert_rule_recipients').select('rule_id').where('recipient_id', '=', id));
      return (await query.orderBy('id').execute()).map((r) => ({ id: Number(r.id), name: r.name }));
    },
  };
}

export type RuleService = ReturnType<typeof createRuleService>;
