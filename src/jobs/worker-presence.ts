import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../db/schema.ts';
import type { Clock } from '../lib/clock.ts';

/** A worker not seen for this many heartbeats is taken for dead and its claims for abandoned. */
const MISSED_HEARTBEATS = 6;
/** Rows of workers gone this long are removed when a process registers. */
const FORGET_AFTER_MS = 24 * 3_600_000;

/**
 * This process as a claimant of work (jobs, notifications, rule runs, due rules). It registers
 * in `workers` when it first claims something and refreshes `seen_at` every heartbeat while it
 * runs. Another process takes a claim for abandoned when its claimant has not been seen for
 * MISSED_HEARTBEATS heartbeats (a process killed, or frozen that long): a dead worker's work is
 * taken up within seconds, not after a lease of minutes. Whoever finishes a piece of work
 * writes its outcome only where it still holds the claim, so a worker presumed dead that wakes
 * up cannot record a second result.
 */
export function createWorkerPresence(deps: { db: Kysely<Database>; clock: Clock; heartbeatMs: number }) {
  const { db, clock, heartbeatMs } = deps;
  const id = randomUUID();
  let lastBeat: number | null = null;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const beat = async () => {
    const now = clock.now().getTime();
    await db
      .insertInto('workers')
      .values({ id, pid: process.pid, host: hostname(), started_at: now, seen_at: now })
      .onConflict((oc) => oc.column('id').doUpdateSet({ seen_at: now }))
      .execute();
    lastBeat = now;
  };

  return {
    id,

    /**
     * Registers this process (the first time) or refreshes its heartbeat when the clock has
     * moved past one; call before claiming work.
     */
    async ensure(): Promise<void> {
      if (closed) throw new Error('worker presence is closed');
      // The timer is set before the first await: the scheduler's two loops may both call this
      // at start, and a second interval would go on beating after close().
      if (timer === undefined) {
        timer = setInterval(() => void beat().catch(() => undefined), heartbeatMs);
        // A heartbeat must not keep a finished CLI command alive.
        timer.unref();
        await db
          .deleteFrom('workers')
          .where('seen_at', '<', clock.now().getTime() - FORGET_AFTER_MS)
          .execute();
      }
      if (lastBeat === null || clock.now().getTime() - lastBeat >= heartbeatMs) await beat();
    },

    /**
     * SQL: the claim whose claimant is in `column` is abandoned: nobody holds it, or its worker
     * has not been seen for MISSED_HEARTBEATS heartbeats. Never this process's own claims.
     */
    abandoned(column: string): RawBuilder<boolean> {
      const seenSince = clock.now().getTime() - MISSED_HEARTBEATS * heartbeatMs;
      return sql<boolean>`(${sql.ref(column)} is null or (${sql.ref(column)} <> ${id}
        and not exists (select 1 from workers where workers.id = ${sql.ref(column)} and workers.seen_at >= ${seenSince})))`;
    },

    /** Stops the heartbeat and removes this process from `workers` (a clean shutdown). */
    async close(): Promise<void> {
      closed = true;
      clearInterval(timer);
      if (lastBeat !== null)
        await db
          .deleteFrom('workers')
          .where('id', '=', id)
          .execute()
          .catch(() => undefined);
    },
  };
}

export type WorkerPresence = ReturnType<typeof createWorkerPresence>;
