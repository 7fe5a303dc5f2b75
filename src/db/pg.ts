import { createRequire } from 'node:module';
import type pg from 'pg';

/**
 * The pg driver, required when a PostgreSQL store is opened: with its type parsers it is a
 * tenth of a `dragnet` command's start-up, which commands on the embedded store need not pay.
 */
export const loadPg = (): typeof pg => createRequire(import.meta.url)('pg') as typeof pg;
