import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

/**
 * The better-sqlite3 build for this Node. Node 22 and later load 13 (Node-API, prebuilt in its
 * package), installed under the alias better-sqlite3-13: 12 aborts Node 24.19+ whenever the
 * garbage collector finalizes one of its statements (its ObjectWrap removes a cleanup hook with
 * no environment). Node 20 loads 12 (compiled at install), the package named better-sqlite3: 13
 * crashes it on load. Both have the same API. The reader threads load the same one by name.
 */
export const SQLITE_DRIVER = Number(process.versions.node.split('.')[0]) >= 22 ? 'better-sqlite3-13' : 'better-sqlite3';

export const SqliteDatabase = createRequire(import.meta.url)(SQLITE_DRIVER) as typeof BetterSqlite3;
