import { sql, type Kysely } from 'kysely';
import { prepared } from '../../../db/prepared-statements.ts';
import type { Database } from '../../../db/schema.ts';
import type { Clock } from '../../../lib/clock.ts';
import type { CounterSlot, CounterStore, ReserveOutcome } from './counter-store.ts';

const CLEANUP_INTERVAL_MS = 60_000;

/** Scale-out without Redis: PostgreSQL rows, locked and incremented by dragnet_rate_reserve. */
export function createPostgresCounters(deps: { db: Kysely<Database>; clock: Clock }): CounterStore {
  const { db, clock } = deps;
  const cleanup = setInterval(() => {
    void db
      .deleteFrom('rate_counters')
      .where('expires_at', '<=', clock.now().getTime())
      .execute()
      .catch(() => undefined);
  }, CLEANUP_INTERVAL_MS);
  cleanup.unref();

  return {
    async reserve(slots: CounterSlot[]): Promise<ReserveOutcome> {
      // Prepared: every authenticated request sends it, and it is parsed and planned once a connection.
      const { rows } = await prepared(sql<{ result: number[] }>`select dragnet_rate_reserve(
          ${slots.map((s) => s.key)}::text[], ${slots.map((s) => s.limit)}::integer[], ${slots.map((s) => s.expiresAt)}::bigint[]
        ) as result`).execute(db);
      const result = rows[0]!.result.map(Number);
      if (result[0] !== undefined && result[0] < 0) return { ok: false, index: -result[0] - 1, count: result[1] ?? 0 };
      return { ok: true, counts: result };
    },

    async release(slots: CounterSlot[]): Promise<void> {
      // One key per statement: a multi-row update would lock the rows in physical order, not
      // in the order dragnet_rate_reserve locks them, and the two could deadlock.
      for (const { key } of slots) {
        await db
          .updateTable('rate_counters')
          .set((eb) => ({ count: eb('count', '-', 1) }))
          .where('key', '=', key)
          .where('count', '>', 0)
          .execute();
      }
    },

    async read(keys: string[]): Promise<number[]> {
      if (keys.length === 0) return [];
      const rows = await db
        .selectFrom('rate_counters')
        .select(['key', 'count'])
        .where('key', 'in', keys)
        .where('expires_at', '>', clock.now().getTime())
        .execute();
      const byKey = new Map(rows.map((r) => [r.key, Number(r.count)]));
      return keys.map((key) => byKey.get(key) ?? 0);
    },

    async close(): Promise<void> {
      clearInterval(cleanup);
    },
  };
}
