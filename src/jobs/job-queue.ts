import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.ts';
import type { Clock } from '../lib/clock.ts';

/** A job is a definition: an id (type), what its payload holds, and the handler that runs it. */
export interface JobDefinition<Payload> {
  type: string;
  handler(payload: Payload): Promise<void>;
}

type Executor = Kysely<Database> | Transaction<Database>;

const LEASE_MS = 5 * 60_000;
const MAX_ATTEMPTS = 3;

/**
 * Jobs live in the store, so every worker process (and a restarted one) sees the same queue. A
 * job key makes enqueueing idempotent; a worker claims a job with a conditional update, so two
 * workers never run it at once; a claim expires after a lease, so a crashed worker's job is
 * taken up again.
 */
export function createJobQueue(deps: { db: Kysely<Database>; clock: Clock }) {
  const { db, clock } = deps;
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

    /** Runs every job that is due now; returns how many ran. */
    async runDue(limit = 20): Promise<number> {
      const now = clock.now().getTime();
      const candidates = await db
        .selectFrom('jobs')
        .selectAll()
        .where((eb) =>
          eb.or([
            eb.and([eb('status', '=', 'queued'), eb('run_after', '<=', now)]),
            eb.and([eb('status', '=', 'running'), eb('claimed_until', '<', now)]),
          ]),
        )
        .orderBy('id')
        .limit(limit)
        .execute();
      let ran = 0;
      for (const job of candidates) {
        const claimed = await db
          .updateTable('jobs')
          .set({ status: 'running', claimed_until: now + LEASE_MS, attempts: job.attempts + 1 })
          .where('id', '=', job.id)
          .where('status', '=', job.status)
          .where('attempts', '=', job.attempts)
          .executeTakeFirst();
        if (claimed.numUpdatedRows === 0n) continue;
        const definition = definitions.get(job.type);
        try {
          if (!definition) throw new Error(`no job definition for type ${job.type}`);
          await definition.handler(JSON.parse(job.payload) as never);
          await db.updateTable('jobs').set({ status: 'done', finished_at: clock.now().getTime(), error: null }).where('id', '=', job.id).execute();
        } catch (error) {
          const failedForGood = job.attempts + 1 >= MAX_ATTEMPTS;
          await db
            .updateTable('jobs')
            .set({
              status: failedForGood ? 'failed' : 'queued',
              run_after: clock.now().getTime() + 60_000 * (job.attempts + 1),
              error: (error as Error).message,
              finished_at: failedForGood ? clock.now().getTime() : null,
            })
            .where('id', '=', job.id)
            .execute();
        }
        ran++;
      }
      return ran;
    },
  };
}

export type JobQueue = ReturnType<typeof createJobQueue>;
