import { AsyncLocalStorage } from 'node:async_hooks';
import type pg from 'pg';
import { AppError } from '../lib/errors.ts';

/**
 * Reads that stop when their client goes away. A request handler runs its store work inside
 * `cancellable(signal, …)`; every statement started inside it on a cancellable connection
 * (the SQLite readers, PostgreSQL) is interrupted in the store once the signal aborts, so a
 * search nobody waits for stops using a reader thread or a PostgreSQL backend.
 */
const current = new AsyncLocalStorage<AbortSignal>();

/** Runs `work` cancellable by `signal`; once the signal aborted, whatever failed fails as client_closed_request. */
export async function cancellable<T>(signal: AbortSignal | undefined, work: () => Promise<T>): Promise<T> {
  if (!signal) return work();
  try {
    return await current.run(signal, work);
  } catch (error) {
    if (signal.aborted)
      throw new AppError('client_closed_request', 'the client went away before the answer was complete', {
        cause: error,
      });
    throw error;
  }
}

/** Runs `work` outside any cancellable work: clean-up of work that was cancelled. */
export const uncancellable = <T>(work: () => T): T => current.exit(work);

/** The signal of the work running now, if it is cancellable. */
export const cancellationSignal = (): AbortSignal | undefined => current.getStore();

/** The error of a statement stopped because its signal aborted. */
export class QueryCancelledError extends Error {
  readonly code = 'query_cancelled';
  constructor() {
    super('the statement was cancelled: its client went away');
  }
}

/**
 * PostgreSQL: a statement sent inside `cancellable` is cancelled with pg_cancel_backend when the
 * signal aborts while it runs. The cancel names the backend and the statement's text, so a
 * backend that has moved on to another statement in the meantime is left alone.
 */
export function cancelStatementsOnAbort(pool: pg.Pool): void {
  const cancel = (pid: number, text: string) => {
    pool
      .query(
        `select pg_cancel_backend(pid) from pg_stat_activity
         where pid = $1 and state = 'active' and query <> '' and left($2::text, length(query)) = query`,
        [pid, text],
      )
      .catch(() => undefined);
  };
  pool.on('connect', (client) => {
    const send = client.query.bind(client) as (...args: unknown[]) => unknown;
    const pid = (client as unknown as { processID: number }).processID;
    client.query = ((...args: unknown[]) => {
      const signal = cancellationSignal();
      const text = args[0];
      if (!signal || typeof text !== 'string') return send(...args);
      if (signal.aborted) return Promise.reject(new QueryCancelledError());
      const onAbort = () => cancel(pid, text);
      signal.addEventListener('abort', onAbort, { once: true });
      return (send(...args) as Promise<unknown>).finally(() => signal.removeEventListener('abort', onAbort));
    }) as typeof client.query;
  });
}
