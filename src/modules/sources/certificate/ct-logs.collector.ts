import { setTimeout as sleep } from 'node:timers/promises';
import { Type, type Static } from '@sinclair/typebox';
import { CollectorSettingsError, HTTP_URL_FORMAT } from '../kit/collector-settings.ts';
import { defineCollector, type CollectorRun, type SourceContext } from '../kit/source.ts';
import { logIdOf, recordOfLogEntry, type CertificateRecord } from './certificate-record.ts';
import { writeCertificates } from './certificate-store.ts';

/**
 * The `ct-logs` collector (docs/collectors.md): reads new entries of RFC 6962 Certificate
 * Transparency logs straight from the logs (get-sth, then get-entries in batches from where the
 * previous run stopped) and stores their certificates and precertificates like `dragnet ingest
 * certificate` does.
 */
const settings = Type.Object({
  /** Base URLs, each ending in `/` once refined. */
  logs: Type.Array(
    Type.String({
      format: HTTP_URL_FORMAT,
      errorMessage: 'must be an http(s) URL, a CT log base such as https://ct.googleapis.com/logs/us1/argon2025h2/',
    }),
    {
      minItems: 1,
      errorMessage: 'must list at least one CT log base URL',
    },
  ),
  batch_size: Type.Integer({ minimum: 1, maximum: 10_000, default: 256 }),
  max_entries_per_run: Type.Integer({ minimum: 1, maximum: 100_000_000, default: 100_000 }),
  timeout_ms: Type.Integer({ minimum: 1, maximum: 600_000, default: 30_000 }),
  /** Where a log without a cursor starts: its current tree size, or an entry index. */
  start: Type.Union(
    [
      Type.Literal('now'),
      Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
      Type.String({ pattern: '^\\d+$' }),
    ],
    {
      default: 'now',
      errorMessage: 'must be "now" (the current tree size) or an entry index such as "0"',
    },
  ),
});

/** Per log (by logIdOf), the index of the next entry to read. */
interface Cursor {
  logs: Record<string, number>;
}

/** Times a 429 is waited out before the log's run stops for this time. */
const RATE_LIMIT_RETRIES = 3;
/** A longer Retry-After is left to the runner's next run. */
const MAX_RETRY_WAIT_MS = 60_000;

/** The log URLs with their trailing slash, each log once; an index given as a string as a number. */
function refine(checked: Static<typeof settings>) {
  const logs = checked.logs.map((url, i) => {
    const parsed = new URL(url);
    if (parsed.search || parsed.hash)
      throw new CollectorSettingsError(`logs[${i}]`, 'must be a base URL without query or fragment');
    return url.endsWith('/') ? url : `${url}/`;
  });
  const ids = logs.map(logIdOf);
  const repeated = ids.findIndex((id, i) => ids.indexOf(id) !== i);
  if (repeated !== -1) throw new CollectorSettingsError(`logs[${repeated}]`, 'names the same log twice');
  const start: 'now' | number = checked.start === 'now' ? 'now' : Number(checked.start);
  return { ...checked, logs, start };
}

type Settings = ReturnType<typeof refine>;

function cursorOf(value: unknown): Cursor {
  const logs = typeof value === 'object' && value !== null ? (value as { logs?: unknown }).logs : undefined;
  if (typeof logs !== 'object' || logs === null) return { logs: {} };
  return {
    logs: Object.fromEntries(
      Object.entries(logs).filter(
        (entry): entry is [string, number] => Number.isSafeInteger(entry[1]) && entry[1] >= 0,
      ),
    ),
  };
}

/** A log answered with an error or with something that is not RFC 6962. */
class LogError extends Error {}

/** Seconds or an HTTP date (RFC 9110 10.2.3); without one, doubling from a second. */
function retryAfterMs(header: string | null, attempt: number, now: number): number {
  if (header && /^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const date = header ? Date.parse(header) : NaN;
  return Number.isNaN(date) ? 1000 * 2 ** attempt : Math.max(0, date - now);
}

/** Why a request got no answer, in an operator's words (fetch says "fetch failed" or "aborted"). */
function noAnswer(url: string, error: unknown, timeoutMs: number): Error {
  if (error instanceof Error && error.name === 'TimeoutError')
    return new LogError(`${url}: no answer within ${timeoutMs} ms`);
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : null;
  return new LogError(`${url}: ${cause ?? (error instanceof Error ? error.message : String(error))}`);
}

/** GET a log endpoint's JSON, waiting out a few 429s (Retry-After); any other error status ends the log's run. */
async function getJson(url: string, { settings, signal, http }: CollectorRun<Settings>): Promise<unknown> {
  for (let attempt = 0; ; attempt++) {
    try {
      // The timeout covers the body too: fetch aborts the body stream when the signal fires.
      const response = await http.get(url, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.any([signal, AbortSignal.timeout(settings.timeout_ms)]),
      });
      if (response.ok) return await response.json();
      await response.body?.cancel();
      if (response.status === 429 && attempt < RATE_LIMIT_RETRIES) {
        const wait = retryAfterMs(response.headers.get('retry-after'), attempt, Date.now());
        if (wait <= MAX_RETRY_WAIT_MS) {
          await sleep(wait, undefined, { signal });
          continue;
        }
      }
      throw new LogError(`${url} answered HTTP ${response.status}`);
    } catch (error) {
      if (error instanceof LogError || signal.aborted) throw error;
      if (error instanceof SyntaxError) throw new LogError(`${url}: the answer is not JSON`);
      throw noAnswer(url, error, settings.timeout_ms);
    }
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** One get-entries entry of the log at `index` as a record. */
function recordOfEntry(entry: unknown, log: { base: string; id: string }, index: number): CertificateRecord {
  if (!isObject(entry) || typeof entry.leaf_input !== 'string' || typeof entry.extra_data !== 'string')
    throw new LogError('not an entry with leaf_input and extra_data');
  return recordOfLogEntry(
    { leaf_input: entry.leaf_input, extra_data: entry.extra_data },
    { name: log.id, url: log.id, index, link: `${log.base}ct/v1/get-entries?start=${index}&end=${index}` },
  );
}

/**
 * Reads one log from its cursor up to its tree size (at most maxEntriesPerRun), counting the
 * certificates it adds into `tally` as it goes (a log that fails later has still added them).
 */
async function collectLog(
  context: SourceContext,
  run: CollectorRun<Settings>,
  cursor: Cursor,
  base: string,
  tally: { added: number },
): Promise<void> {
  const { settings, signal } = run;
  const id = logIdOf(base);
  const sth = await getJson(`${base}ct/v1/get-sth`, run);
  const treeSize = isObject(sth) ? sth.tree_size : undefined;
  if (typeof treeSize !== 'number' || !Number.isSafeInteger(treeSize) || treeSize < 0)
    throw new LogError(`${base}ct/v1/get-sth: no tree_size`);
  let next = cursor.logs[id];
  if (next === undefined) {
    next = settings.start === 'now' ? treeSize : Math.min(settings.start, treeSize);
    cursor.logs[id] = next;
    await run.saveCursor(cursor);
  }
  let added = 0;
  let read = 0;
  let skipped = 0;
  while (next < treeSize && read < settings.max_entries_per_run && !signal.aborted) {
    const end = Math.min(next + settings.batch_size, treeSize, next + settings.max_entries_per_run - read) - 1;
    const body = await getJson(`${base}ct/v1/get-entries?start=${next}&end=${end}`, run);
    const entries = isObject(body) && Array.isArray(body.entries) ? body.entries.slice(0, end - next + 1) : [];
    // A log may answer with fewer entries than asked for (RFC 6962 4.6), never with none.
    if (entries.length === 0) throw new LogError(`${base}ct/v1/get-entries?start=${next}&end=${end}: no entries`);
    const records: CertificateRecord[] = [];
    for (const [i, entry] of entries.entries()) {
      try {
        records.push(recordOfEntry(entry, { base, id }, next + i));
      } catch (error) {
        // A malformed entry is skipped, not retried: the log serves the same bytes every time.
        skipped++;
        run.log(`${id} entry ${next + i} skipped: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    const { added: stored } = await writeCertificates(context, records, context.clock.now().getTime());
    added += stored;
    tally.added += stored;
    next += entries.length;
    read += entries.length;
    // Saved after each stored batch: a run killed here resumes at the next batch.
    cursor.logs[id] = next;
    await run.saveCursor(cursor);
  }
  run.log(`${id}: ${read} entries read (${skipped} skipped), ${added} new certificates, at ${next} of ${treeSize}`);
}

export const ctLogsCollector = defineCollector({
  name: 'ct-logs',
  description:
    'new certificates and precertificates from RFC 6962 Certificate Transparency logs (get-sth, get-entries from a per-log cursor)',
  defaultIntervalSeconds: 300,
  enabledByDefault: false,
  settings,
  refine,
  async run(context, run) {
    const cursor = cursorOf(run.cursor);
    const tally = { added: 0 };
    const failures: string[] = [];
    // One failing log does not stop the others; the run fails afterwards so the runner backs off.
    for (const base of run.settings.logs) {
      if (run.signal.aborted) break;
      try {
        await collectLog(context, run, cursor, base, tally);
      } catch (error) {
        if (run.signal.aborted) throw error;
        const message = error instanceof Error ? error.message : String(error);
        failures.push(message);
        run.log(`${logIdOf(base)} stopped, its cursor kept: ${message}`);
      }
    }
    run.signal.throwIfAborted();
    if (failures.length)
      throw new Error(
        `${failures.length} of ${run.settings.logs.length} logs failed (${tally.added} new certificates stored): ${failures.join('; ')}`,
      );
    return { items: tally.added, cursor };
  },
});
