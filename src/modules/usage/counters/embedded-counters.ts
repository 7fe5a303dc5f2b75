import type { Kysely } from 'kysely';
import type { Database } from '../../../db/schema.ts';
import { epochMs, type Clock } from '../../../lib/clock.ts';
import type { Log } from '../../../lib/log.ts';
import type { CounterSlot, CounterStore, ReserveOutcome } from './counter-store.ts';

const FLUSH_INTERVAL_MS = 250;

/**
 * The embedded default (one process on SQLite): counts are exact in memory, where a check and
 * its increment cannot interleave, and written behind to the store so they survive a restart
 * (flushed every 250 ms and on shutdown; a crash loses at most that much).
 */
export async function createEmbeddedCounters(deps: {
  db: Kysely<Database>;
  clock: Clock;
  log: Log;
}): Promise<CounterStore> {
  const { db, clock, log } = deps;
  const counts = new Map<string, { count: number; expiresAt: number }>();
  const dirty = new Set<string>();

  const now = clock.now().getTime();
  await db.deleteFrom('rate_counters').where('expires_at', '<=', now).execute();
  for (const row of await db.selectFrom('rate_counters').selectAll().execute()) {
    counts.set(row.key, { count: Number(row.count), expiresAt: Number(row.expires_at) });
  }

  // A flush that fails (SQLITE_BUSY past the driver's wait while another process holds the
  // write lock for long) must neither reject into nothing (the process would exit) nor lose its
  // counts: its keys go back to `dirty`, the next flush writes them, and one line per failing
  // streak is logged.
  let failing = false;
  const write = async () => {
    if (dirty.size === 0) return;
    const keys = [...dirty];
    dirty.clear();
    const rows = keys.flatMap((key) => {
      const entry = counts.get(key);
      return entry ? [{ key, count: entry.count, expires_at: entry.expiresAt }] : [];
    });
    const current = clock.now().getTime();
    for (const [key, entry] of counts) if (entry.expiresAt <= current) counts.delete(key);
    try {
      await db.transaction().execute(async (tx) => {
        for (let i = 0; i < rows.length; i += 300) {
          await tx
            .insertInto('rate_counters')
            .values(rows.slice(i, i + 300))
            .onConflict((oc) => oc.column('key').doUpdateSet((eb) => ({ count: eb.ref('excluded.count') })))
            .execute();
        }
        await tx.deleteFrom('rate_counters').where('expires_at', '<=', current).execute();
      });
      failing = false;
    } catch (error) {
      for (const key of keys) if (counts.has(key)) dirty.add(key);
      if (!failing) log('rate-limit counters: flush failed, kept for the next one', error);
      failing = true;
    }
  };
  // One flush at a time; a tick during a slow flush (waiting for the write lock) adds none.
  let flushing: Promise<void> | null = null;
  const flush = (): Promise<void> => {
    flushing ??= write().finally(() => (flushing = null));
    return flushing;
  };
  // write() keeps a store failure for the next flush; anything else it throws is still only logged.
  const timer = setInterval(() => {
    flush().catch((error: unknown) => log('rate-limit counters: flush failed', error));
  }, FLUSH_INTERVAL_MS);
  timer.unref();

  const current = (key: string, now: number) => {
    const entry = counts.get(key);
    return entry && entry.expiresAt > now ? entry.count : 0;
  };

  return {
    reserve(slots: CounterSlot[]): ReserveOutcome {
      const now = epochMs(clock);
      for (let index = 0; index < slots.length; index++) {
        const count = current(slots[index]!.key, now);
        if (count >= slots[index]!.limit) return { ok: false, index, count };
      }
      const reserved: number[] = [];
      for (const slot of slots) {
        dirty.add(slot.key);
        const entry = counts.get(slot.key);
        if (entry && entry.expiresAt > now) reserved.push(++entry.count);
        else {
          counts.set(slot.key, { count: 1, expiresAt: slot.expiresAt });
          reserved.push(1);
        }
      }
      return { ok: true, counts: reserved };
    },

    async release(slots: CounterSlot[]): Promise<void> {
      for (const { key } of slots) {
        const entry = counts.get(key);
        if (entry && entry.count > 0) {
          entry.count--;
          dirty.add(key);
        }
      }
    },

    read: async (keys: string[]) => {
      const now = clock.now().getTime();
      return keys.map((key) => current(key, now));
    },

    async close(): Promise<void> {
      clearInterval(timer);
      // A tick's flush may be under way with counts that came after it: wait for it, then write.
      await flushing;
      await flush();
    },
  };
}
