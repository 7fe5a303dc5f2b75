import { sql, type Insertable, type Kysely, type Transaction } from 'kysely';
import type { Database, IncidentEventTable } from '../../db/schema.ts';
import type { Engine } from '../../db/store.ts';

type Executor = Kysely<Database> | Transaction<Database>;

export const incidentStatuses = ['new', 'acknowledged', 'resolved', 'false_positive'] as const;
export type IncidentStatus = (typeof incidentStatuses)[number];

export interface IncidentFilters {
  status?: IncidentStatus[];
  rule_id?: number;
  /** The catalog id of the `source` alias asked for. */
  service_id?: number;
  assignee_id?: number;
  unassigned?: boolean;
  created_after?: number;
  created_before?: number;
}

export const DAY_MS = 86_400_000;
/** How many rules the match statistics name, busiest first. */
const BUSIEST_RULES = 5;

/** Rows per insert or `in (...)` list: well under both engines' bound-parameter limits. */
const ROWS_PER_STATEMENT = 200;

const chunks = <T>(items: T[]): T[][] =>
  Array.from({ length: Math.ceil(items.length / ROWS_PER_STATEMENT) }, (_, i) =>
    items.slice(i * ROWS_PER_STATEMENT, (i + 1) * ROWS_PER_STATEMENT),
  );

/** An organization's matches as incidents: with their rule's name and source and the assignee's email. */
function incidentRows(db: Executor, orgId: number) {
  return db
    .selectFrom('matches as m')
    .innerJoin('alert_rules as r', 'r.id', 'm.rule_id')
    .leftJoin('users as u', 'u.id', 'm.assignee_id')
    .where('m.org_id', '=', orgId);
}

const incidentColumns = [
  'm.id',
  'm.rule_id',
  'm.status',
  'm.total_hits',
  'm.stored_hits',
  'm.excluded_hits',
  'm.window_start',
  'm.window_end',
  'm.created_at',
  'm.completed_at',
  'm.progress',
  'm.incident_status',
  'm.assignee_id',
  'm.status_changed_at',
  'm.status_changed_by',
  'r.name as rule_name',
  'r.service_id',
  'u.email as assignee_email',
] as const;

interface RepositoryDeps {
  db: Kysely<Database>;
  engine: Engine;
}

/** Incidents with their note counts, as a row of the inbox. */
const withNotes = (orgId: number, tx: Executor) =>
  incidentRows(tx, orgId).select((eb) => [
    ...incidentColumns,
    eb
      .selectFrom('incident_events as e')
      .select(eb.fn.countAll<number>().as('n'))
      .whereRef('e.match_id', '=', 'm.id')
      .where('e.kind', '=', 'note')
      .as('notes_count'),
  ]);

/** What the inbox and the incident page read. */
function incidentReads({ db }: RepositoryDeps) {
  return {
    async listPage(orgId: number, filters: IncidentFilters, window: { offset: number; limit: number }) {
      let base = incidentRows(db, orgId);
      if (filters.status?.length) base = base.where('m.incident_status', 'in', filters.status);
      if (filters.rule_id !== undefined) base = base.where('m.rule_id', '=', filters.rule_id);
      if (filters.service_id !== undefined) base = base.where('r.service_id', '=', filters.service_id);
      if (filters.assignee_id !== undefined) base = base.where('m.assignee_id', '=', filters.assignee_id);
      if (filters.unassigned) base = base.where('m.assignee_id', 'is', null);
      if (filters.created_after !== undefined) base = base.where('m.created_at', '>=', filters.created_after);
      if (filters.created_before !== undefined) base = base.where('m.created_at', '<', filters.created_before);
      const { total } = await base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
      const ids = base.select('m.id').orderBy('m.id', 'desc').offset(window.offset).limit(window.limit);
      const rows = await withNotes(orgId, db).where('m.id', 'in', ids).orderBy('m.id', 'desc').execute();
      return { total: Number(total), rows };
    },

    find: (orgId: number, id: number, tx: Executor = db) =>
      withNotes(orgId, tx).where('m.id', '=', id).executeTakeFirst(),

    /** Matches and their counted hits per UTC day since `since`, and per rule. */
    async matchStats(orgId: number, since: number) {
      const recent = db.selectFrom('matches as m').where('m.org_id', '=', orgId).where('m.created_at', '>=', since);
      const counted = sql<number>`sum(m.stored_hits - m.excluded_hits)`;
      const [byDay, byRule] = await Promise.all([
        recent
          .select([
            sql<number>`m.created_at / ${sql.lit(DAY_MS)}`.as('day'),
            (eb) => eb.fn.countAll<number>().as('matches'),
            counted.as('new_hits'),
          ])
          .groupBy(sql`m.created_at / ${sql.lit(DAY_MS)}`)
          .execute(),
        recent
          .innerJoin('alert_rules as r', 'r.id', 'm.rule_id')
          .select(['m.rule_id', 'r.name', 'r.service_id', (eb) => eb.fn.countAll<number>().as('matches')])
          .select(counted.as('new_hits'))
          .groupBy(['m.rule_id', 'r.name', 'r.service_id'])
          .orderBy(counted, 'desc')
          .orderBy('m.rule_id')
          .limit(BUSIEST_RULES)
          .execute(),
      ]);
      return { byDay, byRule };
    },

    async countByStatus(orgId: number): Promise<Map<string, number>> {
      const rows = await db
        .selectFrom('matches')
        .select(['incident_status', (eb) => eb.fn.countAll<number>().as('n')])
        .where('org_id', '=', orgId)
        .groupBy('incident_status')
        .execute();
      return new Map(rows.map((row) => [row.incident_status, Number(row.n)]));
    },

    events: (orgId: number, matchId: number) =>
      db
        .selectFrom('incident_events as e')
        .leftJoin('users as u', 'u.id', 'e.user_id')
        .select(['e.id', 'e.kind', 'e.from_value', 'e.to_value', 'e.note', 'e.user_id', 'e.created_at'])
        .select('u.email as user_email')
        .where('e.org_id', '=', orgId)
        .where('e.match_id', '=', matchId)
        .orderBy('e.id')
        .execute(),

    /** The active users of the organization: who an incident can be assigned to. */
    assignees: (orgId: number, tx: Executor = db) =>
      tx
        .selectFrom('users')
        .select(['id', 'email'])
        .where('org_id', '=', orgId)
        .where('is_active', '=', 1)
        .orderBy('email')
        .execute(),
  };
}

/** The changes people make to incidents, in the caller's transaction. */
function incidentWrites({ db, engine }: RepositoryDeps) {
  return {
    transaction: <T>(work: (tx: Transaction<Database>) => Promise<T>): Promise<T> => db.transaction().execute(work),

    /**
     * The organization's matches among `ids`, locked until the transaction ends on PostgreSQL, so
     * two changes to one incident take turns and each records the state it changed from.
     */
    async lock(orgId: number, ids: number[], tx: Transaction<Database>) {
      const rows = [];
      for (const part of chunks(ids)) {
        const query = tx
          .selectFrom('matches as m')
          .innerJoin('alert_rules as r', 'r.id', 'm.rule_id')
          .select(['m.id', 'm.rule_id', 'm.incident_status', 'm.assignee_id', 'r.name as rule_name'])
          .where('m.org_id', '=', orgId)
          .where('m.id', 'in', part);
        rows.push(...(await (engine === 'postgres' ? query.forUpdate('m') : query).execute()));
      }
      return rows;
    },

    async setStatus(
      ids: number[],
      change: { status: IncidentStatus; by: number; at: number },
      tx: Transaction<Database>,
    ) {
      for (const part of chunks(ids)) {
        await tx
          .updateTable('matches')
          .set({ incident_status: change.status, status_changed_at: change.at, status_changed_by: change.by })
          .where('id', 'in', part)
          .execute();
      }
    },

    async setAssignee(id: number, assigneeId: number | null, tx: Transaction<Database>) {
      await tx.updateTable('matches').set({ assignee_id: assigneeId }).where('id', '=', id).execute();
    },

    async addEvents(events: Insertable<IncidentEventTable>[], tx: Transaction<Database>) {
      for (const part of chunks(events)) await tx.insertInto('incident_events').values(part).execute();
    },

    findAssignee: (orgId: number, userId: number, tx: Executor) =>
      tx
        .selectFrom('users')
        .select(['id', 'email'])
        .where('org_id', '=', orgId)
        .where('id', '=', userId)
        .where('is_active', '=', 1)
        .executeTakeFirst(),

    emailOf: async (userId: number | null, tx: Executor) =>
      userId === null
        ? null
        : ((await tx.selectFrom('users').select('email').where('id', '=', userId).executeTakeFirst())?.email ?? null),

    /** The keys of the match's hits that still count. */
    countedHitKeys: async (matchId: number, tx: Transaction<Database>) =>
      (
        await tx
          .selectFrom('match_hits')
          .select('hit_key')
          .distinct()
          .where('match_id', '=', matchId)
          .where('is_excluded', '=', 0)
          .execute()
      ).map((row) => row.hit_key),

    /**
     * Excludes each hit key from the rule: an exclusion `{field: hit_key, value}` per key (kept
     * when it exists) and every stored hit of the rule with that key, in past matches too, as
     * creating the exclusions one by one would.
     */
    async excludeHitKeys(
      rule: { orgId: number; ruleId: number; now: number },
      keys: string[],
      tx: Transaction<Database>,
    ) {
      for (const part of chunks(keys)) {
        await tx
          .insertInto('exclusions')
          .values(
            part.map((value) => ({
              org_id: rule.orgId,
              rule_id: rule.ruleId,
              field: 'hit_key',
              value,
              created_at: rule.now,
            })),
          )
          .onConflict((oc) => oc.columns(['rule_id', 'field', 'value']).doNothing())
          .execute();
        await tx
          .updateTable('match_hits')
          .set({ is_excluded: 1 })
          .where('rule_id', '=', rule.ruleId)
          .where('hit_key', 'in', part)
          .execute();
      }
    },
  };
}

/** The queries of incidents (matches worked by people) and their events; every one takes the organization. */
export function createIncidentRepository(deps: RepositoryDeps) {
  return { ...incidentReads(deps), ...incidentWrites(deps) };
}

export type IncidentRepository = ReturnType<typeof createIncidentRepository>;
export type IncidentRow = NonNullable<Awaited<ReturnType<IncidentRepository['find']>>>;
