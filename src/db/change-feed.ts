import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';
import { loadPg } from './pg.ts';

/**
 * Tables whose rows every process keeps in memory (src/db/read-cache.ts): the user behind a
 * token and organizations, read by nearly every request. On PostgreSQL a trigger announces
 * each committed change to them on CHANGE_CHANNEL (migration 0009_change_notifications).
 */
export const WATCHED_TABLES = ['users', 'organizations'] as const;
/** Watched tables whose trigger a later migration made (migration 0009 reads WATCHED_TABLES). */
const LATER_WATCHED_TABLES = ['api_keys'] as const;
export type WatchedTable = (typeof WATCHED_TABLES)[number] | (typeof LATER_WATCHED_TABLES)[number];

export const CHANGE_CHANNEL = 'dragnet_changes';

const RECONNECT_MS = 500;

const mentionsWatched = new RegExp(`\\b(${[...WATCHED_TABLES, ...LATER_WATCHED_TABLES].join('|')})\\b`, 'g');
const isRead = /^\s*select\b/i;
const isBegin = /^\s*(begin|start\s+transaction)\b/i;
const isCommit = /^\s*(commit|end)\b/i;
const isRollback = /^\s*rollback\s*$/i;

/**
 * Change stamps for PostgreSQL (see Store.changeStamp), from two sources:
 *
 * - other processes' commits arrive as notifications on a connection of its own that LISTENs,
 *   opened on first use (a CLI command that reads no cached row never opens it). Until it
 *   listens, and whenever it is lost, the stamp is null and every read goes to the store;
 *   after a reconnect every stamp moves, since notifications sent meanwhile are gone.
 * - this process's own writes move the stamp as soon as they commit (`observe` wraps the
 *   pool): a notification takes a moment to come back, and a client that changed its password
 *   must not get in with its old token on its very next request.
 */
export function createChangeFeed(connectionString: string) {
  const generations = new Map<string, number>();
  let epoch = 0;
  let listener: pg.Client | null = null;
  let connecting = false;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  const bump = (table: string) => generations.set(table, (generations.get(table) ?? 0) + 1);

  function connect(): void {
    if (connecting || listener || closed) return;
    connecting = true;
    const client = new (loadPg().Client)({ connectionString, keepAlive: true });
    let lost = false;
    const onLost = () => {
      if (lost) return;
      lost = true;
      if (listener === client) listener = null;
      connecting = false;
      client.removeAllListeners('notification');
      void client.end().catch(() => undefined);
      if (!closed) retry = setTimeout(connect, RECONNECT_MS).unref();
    };
    client.on('notification', (message) => {
      if (message.channel === CHANGE_CHANNEL && message.payload) bump(message.payload);
    });
    client.on('error', onLost);
    client.on('end', onLost);
    client
      .connect()
      .then(() => client.query(`listen ${CHANGE_CHANNEL}`))
      .then(() => {
        connecting = false;
        if (closed || lost) return void client.end().catch(() => undefined);
        epoch++;
        listener = client;
      }, onLost);
  }

  return {
    /** A value that moves on every committed change to `table`; null while nothing listens. */
    stamp(table: WatchedTable): string | null {
      if (!listener) {
        connect();
        return null;
      }
      return `${epoch}:${generations.get(table) ?? 0}`;
    },

    /**
     * The pool as Kysely should use it: each statement that writes a watched table moves that
     * table's stamp once it has committed (at once outside a transaction, at COMMIT inside one).
     */
    observe(pool: Pick<pg.Pool, 'connect' | 'end'>): PostgresPool {
      const wrapped = new WeakMap<pg.PoolClient, PostgresPoolClient>();
      const wrap = (client: pg.PoolClient): PostgresPoolClient => {
        let inTransaction = false;
        const touched = new Set<string>();
        const seen = (text: string) => {
          if (isBegin.test(text)) {
            inTransaction = true;
            touched.clear();
          } else if (isCommit.test(text) || isRollback.test(text)) {
            if (isCommit.test(text)) touched.forEach(bump);
            inTransaction = false;
            touched.clear();
          } else if (!isRead.test(text)) {
            for (const [, table] of text.matchAll(mentionsWatched)) {
              if (inTransaction) touched.add(table!);
              else bump(table!);
            }
          }
        };
        const query = (text: unknown, parameters?: readonly unknown[]) => {
          // A cursor (Kysely's stream()) only reads.
          if (typeof text !== 'string') return client.query(text as pg.Submittable);
          return client.query(text, parameters as unknown[]).then((result) => {
            seen(text);
            return result;
          });
        };
        return { query: query as unknown as PostgresPoolClient['query'], release: () => client.release() };
      };
      return {
        async connect() {
          const client = await pool.connect();
          let known = wrapped.get(client);
          if (!known) wrapped.set(client, (known = wrap(client)));
          return known;
        },
        end: () => pool.end(),
      };
    },

    async close(): Promise<void> {
      closed = true;
      clearTimeout(retry);
      const client = listener;
      listener = null;
      await client?.end().catch(() => undefined);
    },
  };
}
