import { sql, type Insertable, type Kysely, type Transaction } from 'kysely';
import type { Database, MatchTable } from '../../db/schema.ts';
import type { WorkerPresence } from '../../jobs/worker-presence.ts';

type Executor = Kysely<Database> | Transaction<Database>;

/** A stored hit of a match, as the runner records it. */
interface HitToStore {
  key: string;
  date: number;
  data: Record<string, unknown>;
  excluded: boolean;
}

/** Hits written per insert statement. */
const HITS_PER_INSERT = 200;
/** Hit ids per statement when exclusions change. */
const IDS_PER_UPDATE = 500;

interface RepositoryDeps {
  db: Kysely<Database>;
  presence: WorkerPresence;
}

/** A run's claim of its window and its status; its writes happen only while this worker holds it (`hold`). */
function runQueries({ db, presence }: RepositoryDeps) {
  return {
    transaction: <T>(work: (tx: Transaction<Database>) => Promise<T>): Promise<T> => db.transaction().execute(work),

    /** Records the run of `runKey` for this worker; null when the key exists (another worker has or had it). */
    async start(run: {
      orgId: number;
      ruleId: number;
      runKey: string;
      windowStart: number | null;
      windowEnd: number;
      now: number;
    }): Promise<number | null> {
      const row = await db
        .insertInto('rule_runs')
        .values({
          org_id: run.orgId,
          rule_id: run.ruleId,
          run_key: run.runKey,
          window_start: run.windowStart,
          window_end: run.windowEnd,
          status: 'running',
          claimed_by: presence.id,
          created_at: run.now,
        })
        .onConflict((oc) => oc.column('run_key').doNothing())
        .returning('id')
        .executeTakeFirst();
      return row ? Number(row.id) : null;
    },

    /** Takes over the run of `runKey` when it is still running and its worker is dead; null otherwise. */
    async takeOverAbandoned(runKey: string, windowStart: number | null): Promise<number | null> {
      const row = await db
        .updateTable('rule_runs')
        .set({ claimed_by: presence.id, window_start: windowStart })
        .where('run_key', '=', runKey)
        .where('status', '=', 'running')
        .where(presence.abandoned('rule_runs.claimed_by'))
        .returning('id')
        .executeTakeFirst();
      return row ? Number(row.id) : null;
    },

    /**
     * Closes the rule's runs of earlier windows left 'running' by a worker that died: the rule's
     * last run never moved past them, so the run just started for a later window covers theirs.
     * Looked for first, so that the usual case (none) takes no write lock on SQLite.
     */
    async closeSuperseded(run: { ruleId: number; windowEnd: number; now: number }) {
      const left = await db
        .selectFrom('rule_runs')
        .select('id')
        .where('rule_id', '=', run.ruleId)
        .where('status', '=', 'running')
        .where('window_end', '<', run.windowEnd)
        .where(presence.abandoned('rule_runs.claimed_by'))
        .execute();
      if (left.length === 0) return;
      await db
        .updateTable('rule_runs')
        .set({
          status: 'failed',
          error: `its worker died before recording it; the run of the window ending ${new Date(run.windowEnd).toISOString()} covers it`,
          completed_at: run.now,
        })
        .where(
          'id',
          'in',
          left.map((row) => row.id),
        )
        .where('status', '=', 'running')
        // Still abandoned: not taken over by a live worker since it was looked for.
        .where(presence.abandoned('rule_runs.claimed_by'))
        .execute();
    },

    /**
     * Whether the run is still this worker's; on PostgreSQL the row stays locked until the
     * transaction commits, so no takeover lands between this and the run's writes.
     */
    async hold(runId: number, tx: Transaction<Database>): Promise<boolean> {
      const held = await tx
        .updateTable('rule_runs')
        .set({ claimed_by: presence.id })
        .where('id', '=', runId)
        .where('claimed_by', '=', presence.id)
        .where('status', '=', 'running')
        .executeTakeFirst();
      return held.numUpdatedRows > 0n;
    },

    findById: (runId: number) =>
      db.selectFrom('rule_runs').selectAll().where('id', '=', runId).executeTakeFirstOrThrow(),

    window: (runId: number, tx: Transaction<Database>) =>
      tx
        .selectFrom('rule_runs')
        .select(['window_start', 'window_end'])
        .where('id', '=', runId)
        .executeTakeFirstOrThrow(),

    async markPending(runId: number, tx: Transaction<Database>) {
      await tx.updateTable('rule_runs').set({ status: 'pending' }).where('id', '=', runId).execute();
    },

    async markEmpty(runId: number, now: number, tx: Transaction<Database>) {
      await tx.updateTable('rule_runs').set({ status: 'empty', completed_at: now }).where('id', '=', runId).execute();
    },

    async markCompleted(runId: number, result: { hits: number; now: number }, tx: Transaction<Database>) {
      await tx
        .updateTable('rule_runs')
        .set({ status: 'completed', hits: result.hits, completed_at: result.now })
        .where('id', '=', runId)
        .execute();
    },

    /** Only while this worker still holds the run: a run taken over is the new worker's to record. */
    async markFailed(runId: number, reason: string, now: number) {
      await db
        .updateTable('rule_runs')
        .set({ status: 'failed', error: reason, completed_at: now })
        .where('id', '=', runId)
        .where('claimed_by', '=', presence.id)
        .execute();
    },
  };
}

/** The matches runs record, their hits, and the notification outbox rows a match queues. */
function matchQueries({ db }: RepositoryDeps) {
  return {
    async insertMatch(values: Insertable<MatchTable>, tx: Transaction<Database>): Promise<number> {
      const row = await tx.insertInto('matches').values(values).returning('id').executeTakeFirstOrThrow();
      return Number(row.id);
    },

    async completeMatch(
      matchId: number,
      counts: { total_hits: number; stored_hits: number; excluded_hits: number; completed_at: number },
      tx: Transaction<Database>,
    ) {
      await tx
        .updateTable('matches')
        .set({ ...counts, status: 'complete' })
        .where('id', '=', matchId)
        .execute();
    },

    async deleteMatch(matchId: number, tx: Transaction<Database>) {
      await tx.deleteFrom('matches').where('id', '=', matchId).execute();
    },

    async setProgress(matchId: number, progress: { done: number; total: number; unit: string }) {
      await db
        .updateTable('matches')
        .set({ progress: JSON.stringify(progress) })
        .where('id', '=', matchId)
        .execute();
    },

    async insertHits(match: { matchId: number; ruleId: number }, hits: HitToStore[], tx: Transaction<Database>) {
      for (let i = 0; i < hits.length; i += HITS_PER_INSERT) {
        await tx
          .insertInto('match_hits')
          .values(
            hits.slice(i, i + HITS_PER_INSERT).map((hit) => ({
              match_id: match.matchId,
              rule_id: match.ruleId,
              hit_key: hit.key,
              hit_date: hit.date,
              data: JSON.stringify(hit.data),
              is_excluded: hit.excluded ? 1 : 0,
            })),
          )
          .execute();
      }
    },

    /** Refreshes the rule's counters from its stored hits (they count non-excluded results). */
    async recount(ruleId: number, tx: Executor) {
      await sql`update matches set excluded_hits = (select count(*) from match_hits h where h.match_id = matches.id and h.is_excluded = 1)
      where rule_id = ${ruleId}`.execute(tx);
      await sql`update alert_rules set
        total_matches_count = (select count(*) from match_hits h join matches m on m.id = h.match_id
          where h.rule_id = ${ruleId} and h.is_excluded = 0 and m.status = 'complete'),
        total_alerts_count = (select count(*) from matches m where m.rule_id = ${ruleId} and m.status = 'complete'
          and exists (select 1 from match_hits h where h.match_id = m.id and h.is_excluded = 0))
      where id = ${ruleId}`.execute(tx);
    },

    /** The outbox rows the dispatcher delivers, one per channel. */
    async queueNotifications(
      notification: { orgId: number; ruleId: number; matchId: number; now: number },
      channels: string[],
      tx: Transaction<Database>,
    ) {
      await tx
        .insertInto('notifications')
        .values(
          channels.map((channel) => ({
            org_id: notification.orgId,
            rule_id: notification.ruleId,
            match_id: notification.matchId,
            channel,
            status: 'pending',
            created_at: notification.now,
          })),
        )
        .execute();
    },

    findMatch: (orgId: number, matchId: number) =>
      db.selectFrom('matches').selectAll().where('org_id', '=', orgId).where('id', '=', matchId).executeTakeFirst(),

    /** A page of the rule's matches, newest first. */
    async listMatchesPage(orgId: number, ruleId: number, window: { offset: number; limit: number }) {
      const base = db.selectFrom('matches').where('org_id', '=', orgId).where('rule_id', '=', ruleId);
      const { total } = await base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
      const rows = await base.selectAll().orderBy('id', 'desc').offset(window.offset).limit(window.limit).execute();
      return { total: Number(total), rows };
    },

    /** One stored hit of the organization's matches, with its match's rule. */
    findHit: (orgId: number, hitId: number) =>
      db
        .selectFrom('match_hits')
        .innerJoin('matches', 'matches.id', 'match_hits.match_id')
        .select(['match_hits.id', 'match_hits.match_id', 'match_hits.rule_id', 'match_hits.hit_key', 'match_hits.data'])
        .where('matches.org_id', '=', orgId)
        .where('match_hits.id', '=', hitId)
        .executeTakeFirst(),

    hitsOfMatch: (matchId: number) =>
      db
        .selectFrom('match_hits')
        .selectAll()
        .where('match_id', '=', matchId)
        .orderBy('hit_date', 'desc')
        .orderBy('id')
        .execute(),

    hitsOfRule: (ruleId: number, tx: Transaction<Database>) =>
      tx
        .selectFrom('match_hits')
        .select(['id', 'data', 'is_excluded', 'hit_key', 'hit_date'])
        .where('rule_id', '=', ruleId)
        .execute(),

    async setExcluded(hitIds: number[], excluded: boolean, tx: Transaction<Database>) {
      for (let i = 0; i < hitIds.length; i += IDS_PER_UPDATE) {
        await tx
          .updateTable('match_hits')
          .set({ is_excluded: excluded ? 1 : 0 })
          .where('id', 'in', hitIds.slice(i, i + IDS_PER_UPDATE))
          .execute();
      }
    },
  };
}

export function createRunRepository(deps: RepositoryDeps) {
  return { ...runQueries(deps), ...matchQueries(deps) };
}

export type RunRepository = ReturnType<typeof createRunRepository>;
