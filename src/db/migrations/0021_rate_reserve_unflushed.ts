import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
//
// PostgreSQL without Redis: every rate-limited request waits for dragnet_rate_reserve before it
// runs, and its commit waited for a WAL flush: 2 ms p50 at load 7 on the benchmark machine, 12
// ms beside other writes, against 0.2 ms without (docs/performance.md, "The channel filter at
// or below grep -i"). The function now commits its transaction without waiting for the flush
// (`synchronous_commit` off for that transaction alone, set inside it, so the primary's pool
// and every other statement on it keep the flush): a crash of the PostgreSQL server may lose
// the last moments' counts, never more, as the embedded store's counters (written behind every
// 250 ms) and Redis's may. A separate pool of unflushed connections was tried before and taken
// back: 4 connections for every API process's counters left requests waiting too long under
// 200 concurrent ones. Locking, order and results are those of 0003_rate_limits.
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  if (engine !== 'postgres') return;
  await sql`
    create or replace function dragnet_rate_reserve(p_keys text[], p_limits integer[], p_expires bigint[])
    returns integer[] language plpgsql as $$
    declare
      i integer;
      current_count integer;
      counts integer[] := '{}';
    begin
      perform set_config('synchronous_commit', 'off', true);
      for i in 1 .. coalesce(array_length(p_keys, 1), 0) loop
        insert into rate_counters(key, count, expires_at) values (p_keys[i], 0, p_expires[i])
          on conflict (key) do nothing;
        select count into current_count from rate_counters where key = p_keys[i] for update;
        if current_count >= p_limits[i] then
          return array[-i, current_count];
        end if;
        counts := counts || (current_count + 1);
      end loop;
      update rate_counters set count = count + 1 where key = any(p_keys);
      return counts;
    end $$`.execute(db);
}
