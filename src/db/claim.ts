import type { Engine } from './store.ts';

/**
 * The rows a claiming UPDATE takes, chosen by `query` (a subquery of ids). On PostgreSQL they
 * are locked, and rows that another transaction holds are skipped (FOR UPDATE SKIP LOCKED):
 * workers claiming at the same moment take different rows instead of queueing behind one
 * another's locks and then finding the rows gone. SQLite has one writer at a time, and the
 * UPDATE reads and writes its rows in one step.
 */
export const claimable = <Q extends { forUpdate(): { skipLocked(): Q } }>(query: Q, engine: Engine): Q =>
  engine === 'postgres' ? query.forUpdate().skipLocked() : query;
