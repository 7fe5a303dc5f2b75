import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';

/** What live_search_capacity reads of the store besides the rate limiter's counts. */
export function createQuickSearchRepository(db: Kysely<Database>) {
  return {
    /** Background jobs waiting and running, and the organization's matches a job is still filling. */
    async backgroundLoad(orgId: number) {
      const jobs = await db
        .selectFrom('jobs')
        .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
        .where('status', 'in', ['queued', 'running'])
        .groupBy('status')
        .execute();
      const pending = await db
        .selectFrom('matches')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('org_id', '=', orgId)
        .where('status', '=', 'pending')
        .executeTakeFirstOrThrow();
      const count = (status: string) => Number(jobs.find((row) => row.status === status)?.n ?? 0);
      return { queued_jobs: count('queued'), running_jobs: count('running'), pending_matches: Number(pending.n) };
    },
  };
}

export type QuickSearchRepository = ReturnType<typeof createQuickSearchRepository>;
