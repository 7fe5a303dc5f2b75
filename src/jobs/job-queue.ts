import type { Expression, ExpressionBuilder, Kysely, SqlBool, Transaction } from 'kysely';
import { claimable } from '../db/claim.ts';
import type { Database } from '../db/schema.ts';
import type { Engine } from '../db/store.ts';
import type { Clock } from '../lib/clock.ts';
import type { WorkerPresence } from './worker-presence.ts';

/** A job is a definition: an id (type), what its payload holds, and the handler that runs it. */
export interface JobDefinition<Payload> {
  type: string;
  handler(payload: Payload): Promise<void>;
}

type Executor = Kysely<Database> | Transaction<Database>;

const MAX_ATTEMPTS = 3;

/**
 * Jobs live in the store, so every worker process (and a restarted one) sees the same queue. A
 * job key makes enqueueing idempotent; a worker claims one job at a time (FOR UPDATE SKIP LOCKED
 * on PostgreSQL), so two workers never run it at once; a job whose worker died is taken up again
 * by another (src/jobs/worker-presence.ts), and after MAX_ATTEMPTS claims it fails for good.
 */
export function createJobQueue(deps: { db: Kysely<Database>; engine: Engine; clock: Clock; presence: WorkerPresence }) {
  const { db, engine, clock, presence } = deps;
  const definitions = new Map<string, JobDefinition<never>>();

  return {
    define<Payload>(definition: JobDefinition<Payload>) {
      definitions.set(definition.type, definition as JobDefinition<never>);
    },

    /** Enqueues once per key (inside the caller's transaction when one is given). */
    async enqueue(type: string, key: string, payload: unknown, executor: Executor = db): Promise<void> {
      const now = clock.now().getTime();
      await executor
        .insertInto('jobs')
        .values({ type, job_key: key, payload: JSON.stringify(payload), status: 'queued', run_after: now, created_at: now })
        .onConflict((oc) => oc.column('job_key').doNothing())
        .execute();
    },

    /** Runs jobs that are due now, one claim at a time, at most `limit`; returns how many ran. */
    async runDue(limit = 20): Promise<number> {
      let ran = 0;
      for (; ran < limit; ran++) {
        await presence.ensure();
        const now = clock.now().getTime();
        // Two claims rather than one with OR: each is a probe of the (status, …) index, however
        // many finished jobs the table holds.
        const claim = (which: (eb: ExpressionBuilder<Database, 'jobs'>) => Expression<SqlBool>) =>
          db
            .updateTable('jobs')
            .set((eb) => ({ status: 'running', claimed_by: presence.id, attempts: eb('attempts', '+', 1) }))
            .where('id', 'in', claimable(db.selectFrom('jobs').select('id').where(which).orderBy('id').limit(1), engine))
            .returningAll()
            .executeTakeFirst();
        const job =
          (await claim((eb) => eb.and([eb('status', '=', 'queued'), eb('run_after', '<=', now)]))) ??
          (await claim((eb) => eb.and([eb('status', '=', 'running'), presence.abandoned('jobs.claimed_by')])));
        if (!job) break;
        // Written only while this worker holds the claim: one presumed dead keeps its hands off.
        const settle = (values: { status: string; run_after?: number; error: string | null; finished_at: number | null }) =>
          db.updateTable('jobs').set(values).where('id', '=', job.id).where('claimed_by', '=', presence.id).execute();
        const definition = definitions.get(job.type);
        try {
          if (!definition) throw new Error(`no job definition for type ${job.type}`);
          await definition.handler(JSON.parse(job.payload) as never);
          await settle({ status: 'done', finished_at: clock.now().getTime(), error: null });
        } catch (error) {
          const failedForGood = job.attempts >= MAX_ATTEMPTS;
          await settle({
            status: failedForGood ? 'failed' : 'queued',
            run_after: clock.now().getTime() + 60_000 * job.attempts,
            error: (error as Error).message,
            finished_at: failedForGood ? clock.now().getTime() : null,
          });
        }
      }
      return ran;
    },
  };
}

export type JobQueue = ReturnType<typeof createJobQueue>;
