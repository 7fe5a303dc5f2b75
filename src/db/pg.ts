import { createRequire } from 'node:module';
import type pg from 'pg';

// Kept once required: the pool asks for a type parser per column of every result, and a fresh
// createRequire and module resolution each time cost a search answer some 70 µs.
let driver: typeof pg | undefined;

/**
 * The pg driver, required when a PostgreSQL store is opened: with its type parsers it is a
 * tenth of a `dragnet` command's start-up, which commands on the embedded store need not pay.
 */
export const loadPg = (): typeof pg => (driver ??= createRequire(import.meta.url)('pg') as typeof pg);

/** A statement PostgreSQL cancelled at its statement_timeout (SQLSTATE 57014, query_canceled). */
export const isStatementTimeout = (error: unknown): boolean => (error as { code?: unknown } | null)?.code === '57014';

/**
 * The server could not be reached or its connection was lost rather than the statement failing:
 * connection classes 08, admin or crash shutdown (57P01–57P03), too many clients (53300), a
 * socket error, or the pool's wait for a connection timed out. The same statement may work later
 * (or, from a replica, on the primary). A statement_timeout (57014) is not one of them.
 */
export function isConnectionFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    if (code.startsWith('08') || ['57P01', '57P02', '57P03', '53300'].includes(code)) return true;
    if (/^E[A-Z]+$/.test(code))
      return ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND'].includes(code);
    return false;
  }
  const message = (error as { message?: unknown } | null)?.message;
  return (
    typeof message === 'string' &&
    /connection terminated|not queryable|timeout expired|connection error|timeout exceeded when trying to connect/i.test(
      message,
    )
  );
}
