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
