import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../../db/schema.ts';

/**
 * PostgreSQL keeps messages in one partition per calendar month (UTC) of their `date`
 * (migration messenger/0005). A month's partition is created when its first message is written.
 */

/** Start of the UTC month holding `date` (epoch ms). */
export const monthStart = (date: number): number => {
  const day = new Date(date);
  return Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), 1);
};

const nextMonthStart = (start: number): number => {
  const day = new Date(start);
  return Date.UTC(day.getUTCFullYear(), day.getUTCMonth() + 1, 1);
};

/** The partition of the month starting at `start`: messages_y2026m01 (messages_y-0001m01 before year 0). */
export function monthlyPartitionName(start: number): string {
  const day = new Date(start);
  return `messages_y${day.getUTCFullYear()}m${String(day.getUTCMonth() + 1).padStart(2, '0')}`;
}

/**
 * Creates the partitions the given dates need, in the caller's transaction. The table is
 * created on its own and then attached: ATTACH takes a SHARE UPDATE EXCLUSIVE lock on
 * `messages`, which searches reading it do not wait for, where CREATE TABLE … PARTITION OF
 * takes an ACCESS EXCLUSIVE lock that would stop every search until the ingest commits.
 * Callers are message writers, which take turns (MESSAGE_WRITER_LOCK): two never race to
 * create the same month. One keeper serves one transaction: a month it created is gone again
 * if the transaction rolls back.
 */
export function createPartitionKeeper() {
  const known = new Set<number>();
  return {
    async ensure(db: Kysely<Database>, dates: Iterable<number>): Promise<void> {
      const missing = new Set<number>();
      for (const date of dates) {
        const start = monthStart(date);
        if (!known.has(start)) missing.add(start);
      }
      for (const start of missing) {
        const name = monthlyPartitionName(start);
        const { rows } = await sql<{ found: string | null }>`select to_regclass(${name}) as found`.execute(db);
        if (rows[0]?.found === null) {
          await sql`create table ${sql.id(name)} (like messages including defaults including constraints including indexes)`.execute(
            db,
          );
          await sql`alter table messages attach partition ${sql.id(name)}
            for values from (${sql.lit(start)}) to (${sql.lit(nextMonthStart(start))})`.execute(db);
        }
        known.add(start);
      }
    },
  };
}

export type PartitionKeeper = ReturnType<typeof createPartitionKeeper>;
