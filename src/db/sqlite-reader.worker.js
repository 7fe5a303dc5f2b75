// One read-only SQLite connection in a worker thread (src/db/sqlite-readers.ts). Plain
// JavaScript: a worker starts without the TypeScript loader of the thread that made it.
import { getPriority, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';

// Linux keeps a nice value per thread: searches run a little below the process's priority, so
// an ingest, the API's own thread and the scheduler keep their CPU while searches run back to
// back, and searches still get every idle core (docs/architecture.md, "Concurrency").
// Elsewhere the value would apply to the whole process.
const SEARCH_NICENESS = 5;
if (process.platform === 'linux') setPriority(Math.min(19, getPriority() + SEARCH_NICENESS));

// The better-sqlite3 build the main thread chose for this Node (src/db/sqlite-native.ts).
const { default: Database } = await import(workerData.driver);

const database = new Database(workerData.file, { readonly: true, fileMustExist: true });
database.pragma(`busy_timeout = ${workerData.busyTimeoutMs}`);
database.pragma(`cache_size = ${workerData.cacheSizeKib}`);
// No mmap_size: with the file mapped, every commit by another connection cost the next read
// about a millisecond (6 ms for a trigram lookup), more than most searches take.

// dragnet_live() (sqlite-readers.ts livenessCheck): fails the running statement once the main
// thread has written its id into the shared interrupt slot.
const interrupt = workerData.interrupt;
let running = 0;
class Interrupted extends Error {
  code = 'query_cancelled';
}
database.function('dragnet_live', { deterministic: false }, () => {
  if (Atomics.load(interrupt, 0) === running) throw new Interrupted('interrupted');
  return 1;
});

const statements = new Map();
const STATEMENT_CACHE_SIZE = 200;

function statement(text) {
  let found = statements.get(text);
  if (found) {
    statements.delete(text);
  } else {
    found = database.prepare(text);
    if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value);
  }
  statements.set(text, found);
  return found;
}

parentPort.on('message', ({ id, sql, parameters }) => {
  running = id;
  try {
    const prepared = statement(sql);
    if (!prepared.reader) throw new Error('a reader connection only runs statements that return rows');
    parentPort.postMessage({ id, rows: prepared.all(parameters) });
  } catch (error) {
    parentPort.postMessage({ id, error: { message: error.message, code: error.code } });
  }
});
