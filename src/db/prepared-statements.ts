import { createHash } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import type pg from 'pg';

/**
 * PostgreSQL named prepared statements for a few hot reads. Kysely sends every statement
 * unnamed, which the server parses and plans at each execution; over the monthly partitions of
 * `messages` a search's page walk spent 0.96 ms planning to run for 0.36 ms. A statement marked
 * with `prepared` is sent named instead (pg's `{ name, text, values }`): parsed once per
 * connection, planned five times with its values, and then, when PostgreSQL finds its generic
 * plan no dearer, run on that plan without planning (docs/architecture.md, "PostgreSQL
 * connections"). Only statements whose plan does not depend on their values may be marked.
 *
 * The mark is a comment that starts the text, so every wrapper of the pool (cancellation, the
 * change feed, the replicas' failover) still sees the text it knows; only the connection's own
 * `query` (`prepareMarkedStatements`) turns it into a named statement. SQLite ignores it.
 */
const MARK = '/* prepared */ ';

/** Marks `statement` to run as a named prepared statement on PostgreSQL. */
export const prepared = <T>(statement: RawBuilder<T>): RawBuilder<T> => sql<T>`${sql.raw(MARK)}${statement}`;

/**
 * Named statements a connection keeps at most: each holds its parse tree and plans in the
 * backend's memory until the connection closes, so a connection that has met this many shapes
 * runs further ones unnamed, as before.
 */
export const PREPARED_PER_CONNECTION = 100;

/** Sends the marked statements of `pool`'s connections named (none when `enabled` is false). */
export function prepareMarkedStatements(pool: pg.Pool, enabled: boolean): void {
  if (!enabled) return;
  pool.on('connect', (client) => {
    const send = client.query.bind(client) as (...args: unknown[]) => unknown;
    // By text: a statement met again is sent by its name without hashing its text again.
    const names = new Map<string, string>();
    client.query = ((...args: unknown[]) => {
      const [text, values] = args;
      if (typeof text !== 'string' || !text.startsWith(MARK) || args.length !== 2) return send(...args);
      let name = names.get(text);
      if (name === undefined) {
        if (names.size >= PREPARED_PER_CONNECTION) return send(...args);
        name = `dragnet_${createHash('sha1').update(text).digest('hex')}`;
        names.set(text, name);
      }
      return send({ name, text, values });
    }) as typeof client.query;
  });
}
