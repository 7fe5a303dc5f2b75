import type { Static, TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { Expression, ExpressionBuilder, Kysely, SqlBool, Transaction } from 'kysely';
import { claimable } from '../db/claim.ts';
import type { Database, JobTable } from '../db/schema.ts';
import type { Engine } from '../db/store.ts';
import type { Clock } from '../lib/clock.ts';
import type { Log } from '../lib/log.ts';
import type { BoundJob, JobDefinition } from './define-job.ts';
import type { WorkerPresence } from './worker-presence.ts';

type Executor = Kysely<Database> | Transaction<Database>;

const MAX_ATTEMPTS = 3;

/**
 * Jobs live in the store, so every worker process (and a restarted one) sees the same queue. A
 * job key makes enqueueing idempotent.
 */
export function createJobQueue(deps: { db: Kysely<Database>; clock: Clock }) {
  const { db, clock } = deps;
  return {
    /** Enqueues once per key (inside the caller's transaction when one is given). */
    async enqueue<Payload extends TSchema>(
      job: Pick<JobDefinition<Payload, never>, 'id' | 'payload'>,
      key: string,
      payload: Static<Payload>,
      executor: Executor = db,
    ): Promise<void> {
      const now = clock.now().getTime();
      await executor
        .insertInto('jobs')
        .values({
          type: job.id,
          job_key: key,
          payload: JSON.stringify(payload),
          status: 'queued',
          run_after: now,
          created_at: now,
        })
        .onConflict((oc) => oc.column('job_key').doNothing())
        .execute();
    },
  };
}

export type JobQueue = ReturnType<typeof createJobQueue>;

/**
 * Runs the queue's jobs, those of `jobs` (the composition root's list of every job). A worker
 * claims one job at a time (FOR UPDATE SKIP LOCKED on PostgreSQL), so two workers never run it
 * at once; a job whose worker died is taken up again by another (src/jobs/worker-presence.ts),
 * and after MAX_ATTEMPTS claims it fails for good. A row that names no job of the list, or
 * whose payload does not match its job's schema, fails for good at its first claim: another
 * try would find it no different.
 */
export function createJobWorker(deps: {
  db: Kysely<Database>;
  engine: Engine;
  clock: Clock;
  presence: WorkerPresence;
  log: Log;
  jobs: BoundJob[];
}) {
  const { db, engine, clock, presence, log } = deps;
  const jobsById = new Map<string, BoundJob>();
  for (const job of deps.jobs) {
    if (jobsById.has(job.id)) throw new Error(`two jobs have the id ${job.id}`);
    jobsById.set(job.id, job);
  }

  /** The job a claimed row names and its checked payload, or why it cannot run. */
  const readRow = (
    row: Pick<JobTable, 'type' | 'payload'>,
  ): { job: BoundJob; payload: unknown } | { unrunnable: string } => {
    const job = jobsById.get(row.type);
    if (!job) return { unrunnable: `no job has the id ${row.type}` };
    let payload: unknown;
    try {
      payload = JSON.parse(row.payload);
    } catch {
      return { unrunnable: 'its payload is not JSON' };
    }
    const mismatch = Value.Errors(job.payload, payload).First();
    if (mismatch)
      return {
        unrunnable: `its payload does not match the job's schema: ${mismatch.path || '/'}: ${mismatch.message}`,
      };
    return { job, payload };
  };

  return {
    /** Runs jobs that are due now, one claim at a time, at most `limit`; returns how many it claimed. */
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
            .where(
              'id',
              'in',
              claimable(db.selectFrom('jobs').select('id').where(which).orderBy('id').limit(1), engine),
            )
            .returningAll()
            .executeTakeFirst();
        const row =
          (await claim((eb) => eb.and([eb('status', '=', 'queued'), eb('run_after', '<=', now)]))) ??
          (await claim((eb) => eb.and([eb('status', '=', 'running'), presence.abandoned('jobs.claimed_by')])));
        if (!row) break;
        // Written only while this worker holds the claim: one presumed dead keeps its hands off.
        const settle = (values: {
          status: string;
          run_after?: number;
          error: string | null;
          finished_at: number | null;
        }) =>
          db.updateTable('jobs').set(values).where('id', '=', row.id).where('claimed_by', '=', presence.id).execute();
        const read = readRow(row);
        if ('unrunnable' in read) {
          log(`job ${row.id} (${row.type}) failed for good: ${read.unrunnable}`);
          await settle({ status: 'failed', error: read.unrunnable, finished_at: clock.now().getTime() });
          continue;
        }
        try {
          await read.job.run(read.payload);
          await settle({ status: 'done', finished_at: clock.now().getTime(), error: null });
        } catch (error) {
          const failedForGood = row.attempts >= MAX_ATTEMPTS;
          await settle({
            status: failedForGood ? 'failed' : 'queued',
            run_after: clock.now().getTime() + 60_000 * row.attempts,
            error: (error as Error).message,
            finished_at: failedForGood ? clock.now().getTime() : null,
          });
        }
      }
      return ran;
    },
  };
}

export type JobWorker = ReturnType<typeof createJobWorker>;
