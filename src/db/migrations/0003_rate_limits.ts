import { sql, type Kysely } from 'kysely';
import type { MigrationContext } from '../migration-helpers.ts';

// Landed migrations are never edited: add a new numbered file instead.
export async function up(db: Kysely<unknown>, { engine }: MigrationContext): Promise<void> {
  await db.schema
    .createTable('rate_counters')
    // "<org>|<scope>|<period>|<window start>": one row per bucket and calendar window.
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('rate_counters_expiry_idx').on('rate_counters').column('expires_at').execute();

  await db.schema
    .createTable('rate_limit_overrides')
    .addColumn('org_id', 'bigint', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    // "account" or "service:<slug>"
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('period', 'text', (c) => c.notNull())
    // null: no limit for this scope and period
    .addColumn('limit_value', 'integer')
    .addPrimaryKeyConstraint('rate_limit_overrides_pk', ['org_id', 'scope', 'period'])
    .execute();

  if (engine === 'postgres') {
    // All-or-nothing reservation in one round trip, exact across API processes: rows are
    // locked in the order given (callers always pass the same order), checked, then incremented.
    // Returns the new counts, or {-i, count} when bucket i is full (nothing incremented).
    await sql`
      create function dragnet_rate_reserve(p_keys text[], p_limits integer[], p_expires bigint[])
      returns integer[] language plpgsql as $$
      declare
        i integer;
        current_count integer;
        counts integer[] := '{}';
      begin
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
}
