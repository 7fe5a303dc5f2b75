import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { Clock } from '../../lib/clock.ts';
import { storableText } from '../../lib/storable-text.ts';

/** How long a claim holds without a cursor save: a crashed process's collector is free again after it. */
const LEASE_MS = 10 * 60_000;
/** Backoff after failures doubles the interval per consecutive failure, up to this (or the interval). */
const MAX_BACKOFF_MS = 6 * 3_600_000;

/**
 * `collector_state`, one row per collector: the cursor a run saves as it goes, the lease that
 * lets one process at a time run it, and its health.
 */
export function createCollectorStateRepository(deps: { db: Kysely<Database>; clock: Clock }) {
  const { db, clock } = deps;
  const now = () => clock.now().getTime();

  const ensureRow = (name: string) =>
    db
      .insertInto('collector_state')
      .values({ name, next_run_at: now() })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();

  return {
    /**
     * Takes the collector's lease. The loop passes the run count it saw when it judged the
     * collector due: a process that saw it due just before another finished a run then claims
     * nothing, rather than running it again at once.
     */
    async claim(name: string, seenRuns: number | null): Promise<boolean> {
      await ensureRow(name);
      const at = now();
      let update = db
        .updateTable('collector_state')
        .set({ claimed_until: at + LEASE_MS })
        .where('name', '=', name)
        .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', at)]));
      if (seenRuns !== null) update = update.where('runs', '=', seenRuns);
      const result = await update.executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async cursor(name: string): Promise<unknown> {
      const state = await db
        .selectFrom('collector_state')
        .select('cursor')
        .where('name', '=', name)
        .executeTakeFirstOrThrow();
      return state.cursor === null ? null : JSON.parse(state.cursor);
    },

    /** A save during the run extends the lease: the run is alive. */
    async saveCursor(name: string, cursor: unknown): Promise<void> {
      await db
        .updateTable('collector_state')
        .set({ cursor: JSON.stringify(cursor), claimed_until: now() + LEASE_MS })
        .where('name', '=', name)
        .execute();
    },

    async recordSuccess(
      name: string,
      run: { cursor: unknown; items: number; startedAt: number; intervalSeconds: number },
    ): Promise<void> {
      const finishedAt = now();
      await db
        .updateTable('collector_state')
        .set({
          cursor: JSON.stringify(run.cursor),
          claimed_until: null,
          runs: sql`runs + 1`,
          consecutive_failures: 0,
          items_last_run: run.items,
          items_total: sql`items_total + ${run.items}`,
          last_run_at: run.startedAt,
          last_success_at: finishedAt,
          next_run_at: finishedAt + run.intervalSeconds * 1000,
        })
        .where('name', '=', name)
        .execute();
    },

    /** Records a failed run and schedules the next one after the backoff. */
    async recordFailure(
      name: string,
      run: { message: string; startedAt: number; intervalSeconds: number },
    ): Promise<void> {
      const row = await db
        .selectFrom('collector_state')
        .select('consecutive_failures')
        .where('name', '=', name)
        .executeTakeFirstOrThrow();
      const failures = Number(row.consecutive_failures) + 1;
      const intervalMs = run.intervalSeconds * 1000;
      const backoff = Math.min(intervalMs * 2 ** failures, Math.max(intervalMs, MAX_BACKOFF_MS));
      const failedAt = now();
      await db
        .updateTable('collector_state')
        .set({
          claimed_until: null,
          runs: sql`runs + 1`,
          consecutive_failures: failures,
          items_last_run: null,
          last_run_at: run.startedAt,
          // A collector's error may quote what a feed answered.
          last_error: storableText(run.message, 2000),
          last_error_at: failedAt,
          next_run_at: failedAt + backoff,
        })
        .where('name', '=', name)
        .execute();
    },

    async release(name: string): Promise<void> {
      await db.updateTable('collector_state').set({ claimed_until: null }).where('name', '=', name).execute();
    },

    all: () => db.selectFrom('collector_state').selectAll().execute(),

    schedules: () =>
      db
        .selectFrom('collector_state')
        .select(['name', 'next_run_at', 'last_run_at', 'consecutive_failures', 'runs'])
        .execute(),
  };
}
