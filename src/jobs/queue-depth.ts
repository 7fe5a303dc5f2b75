import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import type { QueueDepth } from '../lib/metrics.ts';

/**
 * The backlog of the store's two queues, for the queue-depth gauge: jobs waiting or running,
 * notifications waiting or being sent. Both tables have an index led by `status`, so a scrape
 * counts only the open entries, not the history of finished ones.
 */
export async function readQueueDepth(db: Kysely<Database>): Promise<QueueDepth[]> {
  const jobs = db
    .selectFrom('jobs')
    .select([sql<string>`'jobs'`.as('queue'), 'status', (eb) => eb.fn.countAll<number>().as('count')])
    .where('status', 'in', ['queued', 'running'])
    .groupBy('status');
  const notifications = db
    .selectFrom('notifications')
    .select([sql<string>`'notifications'`.as('queue'), 'status', (eb) => eb.fn.countAll<number>().as('count')])
    .where('status', 'in', ['pending', 'sending'])
    .groupBy('status');
  const rows = await jobs.unionAll(notifications).execute();
  return rows.map((row) => ({ queue: row.queue, status: row.status, count: Number(row.count) }));
}
