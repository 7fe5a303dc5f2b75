import type { Insertable, Kysely, Selectable, Transaction, Updateable } from 'kysely';
import { claimable } from '../../db/claim.ts';
import type { AlertRuleTable, Database } from '../../db/schema.ts';
import type { Engine } from '../../db/store.ts';
import type { WorkerPresence } from '../../jobs/worker-presence.ts';
import { notFound } from '../../lib/errors.ts';
import type { DeliveryKind } from '../delivery/index.ts';

export type RuleRow = Selectable<AlertRuleTable>;
type Executor = Kysely<Database> | Transaction<Database>;

/** The delivery resources a rule refers to. */
type DeliveryTable = 'senders' | 'email_templates' | 'webhooks' | 'recipients' | 'siem_targets';

export interface RuleListFilters {
  include_deleted: boolean;
  recipient_id?: number;
  sender_id?: number;
  email_template_id?: number;
  webhook_id?: number;
}

interface RepositoryDeps {
  db: Kysely<Database>;
  engine: Engine;
  presence: WorkerPresence;
}

/** Ids of the rules that send to the SIEM target. */
const usesSiemTarget = (db: Kysely<Database>, targetId: number) =>
  db.selectFrom('alert_rule_siem_targets').select('rule_id').where('target_id', '=', targetId);

/** Ids of the rules that have the recipient. */
const usesRecipient = (db: Kysely<Database>, recipientId: number) =>
  db.selectFrom('alert_rule_recipients').select('rule_id').where('recipient_id', '=', recipientId);

/** The rules of an organization, as its clients change and read them. */
function organizationRuleQueries({ db, engine }: RepositoryDeps) {
  return {
    transaction: <T>(work: (tx: Transaction<Database>) => Promise<T>): Promise<T> => db.transaction().execute(work),

    findOwned: (orgId: number, id: number, tx: Executor = db) =>
      tx.selectFrom('alert_rules').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst(),

    /**
     * The rule's row, locked until the transaction ends: changes to one rule and to what its
     * deletion snapshot covers (update, delete, restore, its exclusions) take turns, and each sees
     * what the one before it committed. Without it, two deletes at once both snapshotted the rule,
     * the second after the first had detached its recipients and exclusions, and a restore brought
     * back none; an exclusion added while the rule was being deleted stayed on the deleted rule,
     * outside its snapshot. (SQLite transactions take turns anyway.)
     */
    async lock(orgId: number, id: number, tx: Transaction<Database>): Promise<RuleRow> {
      const query = tx.selectFrom('alert_rules').selectAll().where('org_id', '=', orgId).where('id', '=', id);
      const row = await (engine === 'postgres' ? query.forUpdate() : query).executeTakeFirst();
      if (!row) throw notFound('monitoring rule');
      return row;
    },

    /** Serializes rule creation per organization on PostgreSQL (the rule limit and name checks). */
    lockOrganization: async (orgId: number, tx: Transaction<Database>) => {
      await tx
        .updateTable('organizations')
        .set((eb) => ({ updated_at: eb.ref('updated_at') }))
        .where('id', '=', orgId)
        .execute();
    },

    async countActive(orgId: number, tx: Executor = db): Promise<number> {
      const { n } = await tx
        .selectFrom('alert_rules')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('org_id', '=', orgId)
        .where('is_deleted', '=', 0)
        .executeTakeFirstOrThrow();
      return Number(n);
    },

    async activeNameTaken(
      orgId: number,
      name: string,
      options: { exceptRuleId?: number; tx?: Executor } = {},
    ): Promise<boolean> {
      let query = (options.tx ?? db)
        .selectFrom('alert_rules')
        .select('id')
        .where('org_id', '=', orgId)
        .where('is_deleted', '=', 0)
        .where('name', '=', name);
      if (options.exceptRuleId !== undefined) query = query.where('id', '!=', options.exceptRuleId);
      return (await query.executeTakeFirst()) !== undefined;
    },

    insert: (values: Insertable<AlertRuleTable>, tx: Transaction<Database>) =>
      tx.insertInto('alert_rules').values(values).returningAll().executeTakeFirstOrThrow(),

    update: (id: number, changes: Updateable<AlertRuleTable>, tx: Transaction<Database>) =>
      tx.updateTable('alert_rules').set(changes).where('id', '=', id).returningAll().executeTakeFirstOrThrow(),

    /** spec 3.2: marks the rule deleted with its snapshot, and detaches its delivery resources and exclusions. */
    async softDelete(
      change: { id: number; deletedBy: number; snapshot: unknown; now: number },
      tx: Transaction<Database>,
    ): Promise<RuleRow> {
      const { id, now } = change;
      const row = await tx
        .updateTable('alert_rules')
        .set({
          is_deleted: 1,
          deleted_at: now,
          deleted_by: change.deletedBy,
          deletion_snapshot: JSON.stringify(change.snapshot),
          sender_id: null,
          email_template_id: null,
          webhook_id: null,
          updated_at: now,
        })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
      await tx.deleteFrom('alert_rule_recipients').where('rule_id', '=', id).execute();
      await tx.deleteFrom('alert_rule_siem_targets').where('rule_id', '=', id).execute();
      await tx.deleteFrom('exclusions').where('rule_id', '=', id).execute();
      return row;
    },

    /** The organization's active rules that are paused, with who paused them and when. */
    paused: (orgId: number) =>
      db
        .selectFrom('alert_rules')
        .select(['id', 'is_paused', 'paused_at', 'paused_by'])
        .where('org_id', '=', orgId)
        .where('is_deleted', '=', 0)
        .where('is_paused', '=', 1)
        .orderBy('id')
        .execute(),

    async listPage(orgId: number, filters: RuleListFilters, window: { offset: number; limit: number }) {
      let base = db.selectFrom('alert_rules').where('org_id', '=', orgId);
      if (!filters.include_deleted) base = base.where('is_deleted', '=', 0);
      if (filters.sender_id !== undefined) base = base.where('sender_id', '=', filters.sender_id);
      if (filters.email_template_id !== undefined)
        base = base.where('email_template_id', '=', filters.email_template_id);
      if (filters.webhook_id !== undefined) base = base.where('webhook_id', '=', filters.webhook_id);
      if (filters.recipient_id !== undefined) base = base.where('id', 'in', usesRecipient(db, filters.recipient_id));
      const { total } = await base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
      const rows = await base.selectAll().orderBy('id').offset(window.offset).limit(window.limit).execute();
      return { total: Number(total), rows };
    },
  };
}

/** The delivery resources of rules: their recipients, which resources an organization owns, and which rules use one. */
function ruleDeliveryQueries({ db }: RepositoryDeps) {
  return {
    /** Which of `ids` the organization owns in `table`; `allowShared` counts the system's (no org) too. */
    async ownedIds(query: {
      table: DeliveryTable;
      orgId: number;
      ids: number[];
      allowShared?: boolean;
    }): Promise<Set<number>> {
      const { table, orgId, ids, allowShared = false } = query;
      if (ids.length === 0) return new Set<number>();
      const rows = await db
        .selectFrom(table)
        .select('id')
        .where('id', 'in', ids)
        .where((eb) =>
          allowShared ? eb.or([eb('org_id', '=', orgId), eb('org_id', 'is', null)]) : eb('org_id', '=', orgId),
        )
        .execute();
      return new Set(rows.map((r) => Number(r.id)));
    },

    /** Active rules that use a delivery resource. */
    async referencing(orgId: number, kind: DeliveryKind, id: number, tx: Executor = db) {
      let query = tx
        .selectFrom('alert_rules')
        .select(['id', 'name'])
        .where('org_id', '=', orgId)
        .where('is_deleted', '=', 0);
      if (kind === 'sender') query = query.where('sender_id', '=', id);
      if (kind === 'template') query = query.where('email_template_id', '=', id);
      if (kind === 'webhook') query = query.where('webhook_id', '=', id);
      if (kind === 'recipient') query = query.where('id', 'in', usesRecipient(db, id));
      if (kind === 'siem_target') query = query.where('id', 'in', usesSiemTarget(db, id));
      return (await query.orderBy('id').execute()).map((r) => ({ id: Number(r.id), name: r.name }));
    },

    async recipientIds(ruleIds: number[], tx: Executor = db): Promise<Map<number, number[]>> {
      const byRule = new Map<number, number[]>();
      if (ruleIds.length === 0) return byRule;
      const rows = await tx
        .selectFrom('alert_rule_recipients')
        .selectAll()
        .where('rule_id', 'in', ruleIds)
        .orderBy('recipient_id')
        .execute();
      for (const row of rows)
        byRule.set(Number(row.rule_id), [...(byRule.get(Number(row.rule_id)) ?? []), Number(row.recipient_id)]);
      return byRule;
    },

    async siemTargetIds(ruleIds: number[], tx: Executor = db): Promise<Map<number, number[]>> {
      const byRule = new Map<number, number[]>();
      if (ruleIds.length === 0) return byRule;
      const rows = await tx
        .selectFrom('alert_rule_siem_targets')
        .selectAll()
        .where('rule_id', 'in', ruleIds)
        .orderBy('target_id')
        .execute();
      for (const row of rows)
        byRule.set(Number(row.rule_id), [...(byRule.get(Number(row.rule_id)) ?? []), Number(row.target_id)]);
      return byRule;
    },

    hasSiemTarget: async (ruleId: number, tx: Transaction<Database>) =>
      (await tx
        .selectFrom('alert_rule_siem_targets')
        .select('target_id')
        .where('rule_id', '=', ruleId)
        .executeTakeFirst()) !== undefined,

    async setSiemTargets(ruleId: number, targets: number[], tx: Transaction<Database>) {
      await tx.deleteFrom('alert_rule_siem_targets').where('rule_id', '=', ruleId).execute();
      if (targets.length)
        await tx
          .insertInto('alert_rule_siem_targets')
          .values(targets.map((target_id) => ({ rule_id: ruleId, target_id })))
          .execute();
    },

    hasRecipient: async (ruleId: number, tx: Transaction<Database>) =>
      (await tx
        .selectFrom('alert_rule_recipients')
        .select('recipient_id')
        .where('rule_id', '=', ruleId)
        .executeTakeFirst()) !== undefined,

    async setRecipients(ruleId: number, recipients: number[], tx: Transaction<Database>) {
      await tx.deleteFrom('alert_rule_recipients').where('rule_id', '=', ruleId).execute();
      if (recipients.length)
        await tx
          .insertInto('alert_rule_recipients')
          .values(recipients.map((recipient_id) => ({ rule_id: ruleId, recipient_id })))
          .execute();
    },
  };
}

/** The workers' side: the tick's claims of due rules, and the schedule each run moves on. */
function scheduleQueries({ db, engine, presence }: RepositoryDeps) {
  return {
    /** A rule by id alone: runs and jobs name rules, not organizations. */
    findById: (id: number) => db.selectFrom('alert_rules').selectAll().where('id', '=', id).executeTakeFirstOrThrow(),

    /**
     * Claims up to `limit` rules of `serviceIds` that are due by `until` and not yet claimed for
     * that window (or claimed by a worker since dead), for this worker.
     */
    claimDue(until: number, serviceIds: number[], limit: number): Promise<RuleRow[]> {
      const due = db
        .selectFrom('alert_rules')
        .select('id')
        .where('is_deleted', '=', 0)
        .where('is_paused', '=', 0)
        .where('due_at', '<=', until)
        .where('service_id', 'in', serviceIds)
        .where((eb) =>
          eb.or([
            eb('tick_window', 'is', null),
            eb('tick_window', '<', until),
            eb.and([eb('tick_window', '=', until), presence.abandoned('alert_rules.tick_claimed_by')]),
          ]),
        )
        .orderBy('due_at')
        .orderBy('id')
        .limit(limit);
      return db
        .updateTable('alert_rules')
        .set({ tick_window: until, tick_claimed_by: presence.id })
        .where('id', 'in', claimable(due, engine))
        .returningAll()
        .execute();
    },

    /**
     * This worker's tick claim of the rule for window `until` goes to the worker running the
     * window's run `runKey`, so that the rule is claimed again should that worker die.
     */
    async passTickClaimToRunner(ruleId: number, until: number, runKey: string) {
      await db
        .updateTable('alert_rules')
        .set((eb) => ({
          tick_claimed_by: eb
            .selectFrom('rule_runs')
            .select('claimed_by')
            .where('run_key', '=', runKey)
            .where('status', '=', 'running'),
        }))
        .where('id', '=', ruleId)
        .where('tick_window', '=', until)
        .where('tick_claimed_by', '=', presence.id)
        .where((eb) =>
          eb.exists(
            eb.selectFrom('rule_runs').select('id').where('run_key', '=', runKey).where('status', '=', 'running'),
          ),
        )
        .execute();
    },

    /**
     * Moves last_run from the run's window start to `until`, and due_at; false when last_run is
     * no longer where the run started: another run (a slow scheduled one, a "run now") covered
     * part of this window first, and recording this one too would report its hits twice. On
     * PostgreSQL the second of two such updates waits for the first's commit and then finds
     * nothing to update.
     */
    async advance(
      ruleId: number,
      window: { from: number | null; until: number; dueAt: number },
      tx: Transaction<Database>,
    ): Promise<boolean> {
      const { from } = window;
      const moved = await tx
        .updateTable('alert_rules')
        .set({ last_run: window.until, due_at: window.dueAt })
        .where('id', '=', ruleId)
        .where((eb) => (from === null ? eb('last_run', 'is', null) : eb('last_run', '=', from)))
        .executeTakeFirst();
      return moved.numUpdatedRows > 0n;
    },

    async setDueAt(ruleId: number, dueAt: number) {
      await db.updateTable('alert_rules').set({ due_at: dueAt }).where('id', '=', ruleId).execute();
    },
  };
}

/** A rule's exclusions: part of what the rule is, so they go and come back with its deletion snapshot. */
function exclusionQueries({ db }: RepositoryDeps) {
  return {
    exclusions: (ruleId: number, tx: Executor = db) =>
      tx.selectFrom('exclusions').selectAll().where('rule_id', '=', ruleId).orderBy('id').execute(),

    findExclusion: (orgId: number, id: number) =>
      db.selectFrom('exclusions').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst(),

    /** Unique on (rule, field, value): undefined when the exclusion exists (of two identical at once, one inserts). */
    addExclusion: (
      exclusion: { orgId: number; ruleId: number; field: string; value: string; now: number },
      tx: Transaction<Database>,
    ) =>
      tx
        .insertInto('exclusions')
        .values({
          org_id: exclusion.orgId,
          rule_id: exclusion.ruleId,
          field: exclusion.field,
          value: exclusion.value,
          created_at: exclusion.now,
        })
        .onConflict((oc) => oc.columns(['rule_id', 'field', 'value']).doNothing())
        .returningAll()
        .executeTakeFirst(),

    /** A restored rule's exclusions from its snapshot (its own were deleted with it, so none clash). */
    async restoreExclusions(
      rule: { orgId: number; ruleId: number; now: number },
      exclusions: { field: string; value: string }[],
      tx: Transaction<Database>,
    ) {
      for (const { field, value } of exclusions) {
        await tx
          .insertInto('exclusions')
          .values({ org_id: rule.orgId, rule_id: rule.ruleId, field, value, created_at: rule.now })
          .execute();
      }
    },

    async deleteExclusion(id: number, tx: Transaction<Database>) {
      await tx.deleteFrom('exclusions').where('id', '=', id).execute();
    },
  };
}

/**
 * The queries of monitoring rules, their recipients and their exclusions. Every read a client
 * asks for takes the organization id; the by-id reads and the tick's claims are the workers'.
 */
export function createRuleRepository(deps: RepositoryDeps) {
  return {
    ...organizationRuleQueries(deps),
    ...ruleDeliveryQueries(deps),
    ...scheduleQueries(deps),
    ...exclusionQueries(deps),
  };
}

export type RuleRepository = ReturnType<typeof createRuleRepository>;
