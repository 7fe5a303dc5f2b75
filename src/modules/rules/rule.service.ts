import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { HOUR_MS, type Clock } from '../../lib/clock.ts';
import { AppError, conflict, isUniqueViolation, notFound, type FieldError } from '../../lib/errors.ts';
import { linkedPage, pageWindow } from '../../lib/pagination.ts';
import type { OrganizationService } from '../orgs/index.ts';
import type { FollowUpTokens } from '../search/index.ts';
import {
  findSource,
  normalizeArgs,
  validateArgs,
  type SourceContext,
  type SourceDefinition,
} from '../sources/index.ts';
import { frequencyHours, isFrequency, type Frequency } from '../../lib/frequency.ts';
import type { RuleListFilters, RuleRepository, RuleRow } from './rule.repository.ts';
import { isoDateOrNull as iso } from '../../lib/iso-date.ts';
import { TLP_LEVELS } from '../cti/index.ts';

export interface RuleInput {
  name: string;
  service?: number;
  args?: unknown;
  sender?: number | null;
  email_template: number;
  recipients?: number[];
  webhook?: number | null;
  siem_targets?: number[];
  frequency?: string;
  /** TLP 2.0 level of the rule's findings in exports; amber when omitted on create. */
  tlp?: string;
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

/** The rule as the API shows it. */
const ruleView = (row: RuleRow, recipients: number[], siemTargets: number[]) => ({
  id: Number(row.id),
  name: row.name,
  service: Number(row.service_id),
  args: JSON.parse(row.args) as Record<string, unknown>,
  sender: row.sender_id === null ? null : Number(row.sender_id),
  email_template: row.email_template_id === null ? null : Number(row.email_template_id),
  recipients,
  webhook: row.webhook_id === null ? null : Number(row.webhook_id),
  siem_targets: siemTargets,
  frequency: row.frequency,
  tlp: row.tlp,
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

/** The view of each of these rules, with their recipients and SIEM targets read once. */
async function viewsOf(rules: RuleRepository, ruleIds: number[], tx?: Transaction<Database>) {
  const recipients = await rules.recipientIds(ruleIds, tx);
  const siemTargets = await rules.siemTargetIds(ruleIds, tx);
  return (row: RuleRow) => ruleView(row, recipients.get(Number(row.id)) ?? [], siemTargets.get(Number(row.id)) ?? []);
}

type RuleSnapshot = ReturnType<typeof ruleView> & { exclusions: { field: string; value: string }[] };

interface RuleServiceDeps {
  rules: RuleRepository;
  clock: Clock;
  context: SourceContext;
  organizations: OrganizationService;
  followUps: FollowUpTokens;
}

const withRuleNumber = (error: FieldError & { rule: number }): FieldError => ({
  ...error,
  message: `${error.message} (rule ${error.rule})`,
});

/** The service and its args (spec 2.10 rules 1–4), from the body or from a follow-up token. */
async function validateSource(
  deps: RuleServiceDeps,
  orgId: number,
  input: Pick<RuleInput, 'service' | 'args' | 'follow_up_token'>,
  fields: FieldError[],
) {
  let serviceId = input.service;
  let args = input.args;
  if (input.follow_up_token) {
    const followUp = await deps.followUps.verify(orgId, input.follow_up_token);
    if (serviceId !== undefined && serviceId !== 1)
      fields.push({ field: 'service', message: 'a follow_up_token starts a messenger rule (service 1)' });
    if (args !== undefined) fields.push({ field: 'args', message: 'comes from the follow_up_token; omit it' });
    serviceId = 1;
    args = followUp.args;
  }
  if (serviceId === undefined) throw invalid([{ field: 'service', message: 'is required' }]);
  const source = findSource(serviceId);
  if (!source) throw invalid([{ field: 'service', message: `${serviceId} is not a catalog service id` }]);
  if (args === undefined) args = {};

  for (const error of validateArgs(source, args)) fields.push(withRuleNumber(error));
  const normalized = fields.length ? {} : normalizeArgs(source, args);
  if (!fields.length && source.checkStoredReferences) {
    for (const error of await source.checkStoredReferences(deps.context, normalized))
      fields.push(withRuleNumber(error));
  }
  return { source, args: normalized };
}

/** Spec 2.10 rules 1–5 and 7, the references and the name; rule 6 is checked on create. */
async function validateRule(deps: RuleServiceDeps, orgId: number, input: RuleInput, excludeRuleId?: number) {
  const { rules } = deps;
  const fields: FieldError[] = [];
  const { source, args } = await validateSource(deps, orgId, input, fields);

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
    (isFrequency(org.default_frequency) && frequencyHours[org.default_frequency] < frequencyHours[source.frequency]
      ? source.frequency
      : org.default_frequency);
  if (!isFrequency(frequency)) {
    fields.push({ field: 'frequency', message: 'is not a known frequency' });
  } else if (frequencyHours[frequency] < frequencyHours[source.frequency]) {
    fields.push({
      field: 'frequency',
      message: `${frequency} is faster than the ${source.alias} floor of ${source.frequency} (rule 7)`,
      rule: 7,
    });
  }

  const tlp = input.tlp ?? 'amber';
  if (!(TLP_LEVELS as readonly string[]).includes(tlp))
    fields.push({ field: 'tlp', message: `must be one of ${TLP_LEVELS.join(', ')}` });

  const sender = input.sender ?? null;
  if (
    sender !== null &&
    !(await rules.ownedIds({ table: 'senders', orgId, ids: [sender], allowShared: true })).has(sender)
  ) {
    fields.push({ field: 'sender', message: 'no such sender in this organization' });
  }
  if (
    !(await rules.ownedIds({ table: 'email_templates', orgId, ids: [input.email_template] })).has(input.email_template)
  ) {
    fields.push({ field: 'email_template', message: 'no such template in this organization' });
  }
  if (webhook !== null && !(await rules.ownedIds({ table: 'webhooks', orgId, ids: [webhook] })).has(webhook)) {
    fields.push({ field: 'webhook', message: 'no such webhook in this organization' });
  }
  const known = await rules.ownedIds({ table: 'recipients', orgId, ids: recipients });
  const unknown = recipients.filter((id) => !known.has(id));
  if (unknown.length)
    fields.push({ field: 'recipients', message: `no such recipients in this organization: ${unknown.join(', ')}` });
  // SIEM targets come on top of rule 5's recipients or webhook, never instead (docs/siem.md).
  const siemTargets = [...new Set(input.siem_targets ?? [])];
  const knownTargets = await rules.ownedIds({ table: 'siem_targets', orgId, ids: siemTargets });
  const unknownTargets = siemTargets.filter((id) => !knownTargets.has(id));
  if (unknownTargets.length)
    fields.push({
      field: 'siem_targets',
      message: `no such SIEM targets in this organization: ${unknownTargets.join(', ')}`,
    });

  const name = input.name.trim();
  if (!name) fields.push({ field: 'name', message: 'must not be empty' });
  if (name && (await rules.activeNameTaken(orgId, name, { exceptRuleId: excludeRuleId })))
    fields.push({ field: 'name', message: 'is already used by another active rule' });

  if (fields.length) throw invalid(fields);
  return {
    source,
    name,
    args,
    sender,
    template: input.email_template,
    recipients,
    webhook,
    siemTargets,
    frequency,
    tlp,
    org,
  };
}

type ValidRule = Awaited<ReturnType<typeof validateRule>>;

/** Sets the rule's recipients and SIEM targets to the validated body's. */
async function attach(rules: RuleRepository, ruleId: number, valid: ValidRule, tx: Transaction<Database>) {
  await rules.setRecipients(ruleId, valid.recipients, tx);
  await rules.setSiemTargets(ruleId, valid.siemTargets, tx);
}

/** The editable columns of a validated rule body (create and update store the same). */
const storedColumns = (valid: ValidRule) => ({
  name: valid.name,
  service_id: valid.source.id,
  args: JSON.stringify(valid.args),
  sender_id: valid.sender,
  email_template_id: valid.template,
  webhook_id: valid.webhook,
  frequency: valid.frequency,
  tlp: valid.tlp,
});

const deletedConflict = () => new AppError('conflict', 'a deleted rule cannot be updated; restore it first');

async function loadRule(rules: RuleRepository, orgId: number, id: number): Promise<RuleRow> {
  const row = await rules.findOwned(orgId, id);
  if (!row) throw notFound('monitoring rule');
  return row;
}

async function assertWithinLimit(rules: RuleRepository, orgId: number, limit: number, tx: Transaction<Database>) {
  const active = await rules.countActive(orgId, tx);
  if (active >= limit) {
    throw invalid([
      {
        field: 'alert_rule_limit',
        message: `the organization already has ${active} active rules, its limit (rule 6)`,
        rule: 6,
      },
    ]);
  }
}

/** A transaction of rule changes; a unique index that a concurrent change won is a 409, not a 500. */
async function changeRules<T>(rules: RuleRepository, work: (tx: Transaction<Database>) => Promise<T>): Promise<T> {
  try {
    return await rules.transaction(work);
  } catch (error) {
    if (isUniqueViolation(error))
      throw conflict('another change to the same rule or name came first; read the rule again and retry');
    throw error;
  }
}

/** A deleted rule's body as its snapshot kept it, to validate again on restore. */
const snapshotInput = (snapshot: RuleSnapshot): RuleInput => ({
  name: snapshot.name,
  service: snapshot.service,
  args: snapshot.args,
  sender: snapshot.sender,
  email_template: snapshot.email_template ?? 0,
  recipients: snapshot.recipients,
  webhook: snapshot.webhook,
  siem_targets: snapshot.siem_targets ?? [],
  frequency: snapshot.frequency,
  tlp: snapshot.tlp,
});

/**
 * The snapshot's body validated as a create's, without the SIEM targets deleted since (a target
 * is no rule 5 requirement). The rule does not hold its own name against itself: a concurrent
 * restore that came first is restore's 409.
 */
async function validateRestore(deps: RuleServiceDeps, orgId: number, ruleId: number, snapshot: RuleSnapshot) {
  const input = snapshotInput(snapshot);
  const live = await deps.rules.ownedIds({ table: 'siem_targets', orgId, ids: input.siem_targets ?? [] });
  return validateRule(
    deps,
    orgId,
    { ...input, siem_targets: input.siem_targets?.filter((id) => live.has(id)) },
    ruleId,
  );
}

export function createRuleService(deps: RuleServiceDeps) {
  const { rules, clock } = deps;
  const load = (orgId: number, id: number) => loadRule(rules, orgId, id);
  const viewOf = async (row: RuleRow) => (await viewsOf(rules, [Number(row.id)]))(row);

  return {
    viewOf,
    load,

    async create(context: RuleContext, input: RuleInput): Promise<RuleRow> {
      const valid = await validateRule(deps, context.orgId, input);
      const now = clock.now().getTime();
      return changeRules(rules, async (tx) => {
        await rules.lockOrganization(context.orgId, tx);
        await assertWithinLimit(rules, context.orgId, valid.org.alert_rule_limit, tx);
        if (await rules.activeNameTaken(context.orgId, valid.name, { tx }))
          throw invalid([{ field: 'name', message: 'is already used by another active rule' }]);
        const row = await rules.insert(
          {
            ...storedColumns(valid),
            org_id: context.orgId,
            created_by: context.userId,
            // spec 3.3.1: the first run is the creating request's (runNow); workers leave the
            // rule alone meanwhile, and run it themselves only if that never happened.
            due_at: now + FIRST_RUN_GRACE_MS,
            created_at: now,
            updated_at: now,
          },
          tx,
        );
        await attach(rules, Number(row.id), valid, tx);
        return row;
      });
    },

    /** PUT: full replacement with the same validation; the run history stays. */
    async update(context: RuleContext, id: number, input: RuleInput): Promise<RuleRow> {
      const current = await load(context.orgId, id);
      if (Number(current.is_deleted) === 1) throw deletedConflict();
      // A client that knows nothing of TLP (the spec's) keeps the rule's marking on a PUT.
      const valid = await validateRule(deps, context.orgId, { ...input, tlp: input.tlp ?? current.tlp }, id);
      return changeRules(rules, async (tx) => {
        const locked = await rules.lock(context.orgId, id, tx);
        if (Number(locked.is_deleted) === 1) throw deletedConflict();
        // A new frequency or service moves when the rule next falls due.
        const dueAt =
          locked.last_run === null ? 0 : Number(locked.last_run) + effectiveHours(valid, valid.source) * HOUR_MS;
        const row = await rules.update(
          id,
          { ...storedColumns(valid), due_at: dueAt, updated_at: clock.now().getTime() },
          tx,
        );
        await attach(rules, id, valid, tx);
        return row;
      });
    },

    /** spec 3.2: snapshot the whole rule with its attachments, then detach them. */
    async softDelete(context: RuleContext, id: number): Promise<RuleRow> {
      if (Number((await load(context.orgId, id)).is_deleted) === 1) throw notFound('monitoring rule');
      return changeRules(rules, async (tx) => {
        const locked = await rules.lock(context.orgId, id, tx);
        if (Number(locked.is_deleted) === 1) throw notFound('monitoring rule');
        const exclusions = await rules.exclusions(id, tx);
        const snapshot: RuleSnapshot = {
          ...(await viewsOf(rules, [id], tx))(locked),
          exclusions: exclusions.map((e) => ({ field: e.field, value: e.value })),
        };
        return rules.softDelete({ id, deletedBy: context.userId, snapshot, now: clock.now().getTime() }, tx);
      });
    },

    /**
     * Beyond the spec: bring a deleted rule back from its snapshot, re-attaching the delivery
     * resources that still exist; the same validation as create applies (name, limit, rule 5).
     */
    async restore(context: RuleContext, id: number): Promise<RuleRow> {
      const existing = await load(context.orgId, id);
      if (Number(existing.is_deleted) !== 1 || !existing.deletion_snapshot)
        throw new AppError('conflict', 'the rule is not deleted');
      const snapshot = JSON.parse(existing.deletion_snapshot) as RuleSnapshot;
      const valid = await validateRestore(deps, context.orgId, id, snapshot);
      return changeRules(rules, async (tx) => {
        await rules.lockOrganization(context.orgId, tx);
        // The snapshot read above must still be the rule's: a restore (or a restore and a new
        // delete) may have come first.
        const locked = await rules.lock(context.orgId, id, tx);
        if (Number(locked.is_deleted) !== 1 || locked.deletion_snapshot !== existing.deletion_snapshot)
          throw new AppError('conflict', 'the rule is not deleted');
        await assertWithinLimit(rules, context.orgId, valid.org.alert_rule_limit, tx);
        const now = clock.now().getTime();
        const restored = {
          is_deleted: 0,
          deleted_at: null,
          deleted_by: null,
          deletion_snapshot: null,
          updated_at: now,
        };
        const row = await rules.update(
          id,
          { ...restored, sender_id: valid.sender, email_template_id: valid.template, webhook_id: valid.webhook },
          tx,
        );
        await attach(rules, id, valid, tx);
        await rules.restoreExclusions({ orgId: context.orgId, ruleId: id, now }, snapshot.exclusions ?? [], tx);
        return row;
      });
    },

    /**
     * A source and args as a rule of the organization would have them (spec 2.10 rules 1–4),
     * for a preview of a rule not created yet.
     */
    async validSource(orgId: number, input: { service: number; args?: unknown }) {
      const fields: FieldError[] = [];
      const valid = await validateSource(deps, orgId, input, fields);
      if (fields.length) throw invalid(fields);
      return valid;
    },

    /**
     * Pauses or resumes a rule; `changed` is false when it already was so (nothing is written).
     * Neither touches last_run nor due_at: a resumed rule's next run starts from its last run.
     */
    setPaused(context: RuleContext, id: number, paused: boolean) {
      return changeRules(rules, async (tx) => {
        const locked = await rules.lock(context.orgId, id, tx);
        if (Number(locked.is_deleted) === 1) throw conflict('a deleted rule does not run; restore it first');
        if ((Number(locked.is_paused) === 1) === paused) return { rule: locked, changed: false };
        const pause = paused
          ? { is_paused: 1, paused_at: clock.now().getTime(), paused_by: context.userId }
          : { is_paused: 0, paused_at: null, paused_by: null };
        const row = await rules.update(id, pause, tx);
        return { rule: row, changed: true };
      });
    },

    async list(orgId: number, query: RuleListFilters & { page: number; page_size: number }) {
      const { total, rows } = await rules.listPage(orgId, query, pageWindow(query));
      const results = rows.map(
        await viewsOf(
          rules,
          rows.map((r) => Number(r.id)),
        ),
      );
      const { page: _page, page_size: _size, ...filters } = query;
      return linkedPage('/service/alert_system_alert_get_alert_rule_list/', query, total, results, filters);
    },
  };
}

export type RuleService = ReturnType<typeof createRuleService>;
