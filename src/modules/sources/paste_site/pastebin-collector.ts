import { setTimeout as sleep } from 'node:timers/promises';
import { Type, type Static } from '@sinclair/typebox';
import { createDocumentWriter } from '../common/documents/document-store.ts';
import { isJsonObject, RecordError } from '../common/documents/record-fields.ts';
import type { OutboundHttp, OutboundResponse } from '../../../lib/outbound/index.ts';
import { HTTP_URL_FORMAT } from '../kit/collector-settings.ts';
import { defineCollector } from '../kit/source.ts';
import { MAX_PASTE_BYTES, pastebinDocument, pastebinEntry, type PastebinEntry } from './paste-record.ts';

/**
 * The Pastebin scraping API as a collector (docs/collectors.md "pastebin-scraping"): each run
 * reads the list of recent pastes (api_scraping.php, at most 250, newest first), fetches the raw
 * content of each paste not seen yet (api_scrape_item.php?i=KEY) and stores it. Pastebin serves
 * the API only to whitelisted IPs and asks for no more than one request a second.
 */
const settings = Type.Object({
  /** The list URL, e.g. https://scrape.pastebin.com/api_scraping.php?limit=250 */
  url: Type.String({ format: HTTP_URL_FORMAT }),
  /** The item URL the paste key is appended to (default: on the list's host). */
  item_url: Type.Optional(Type.String({ format: HTTP_URL_FORMAT })),
  timeout_ms: Type.Integer({ minimum: 1, default: 30_000 }),
  /** Pause between content requests. */
  request_interval_ms: Type.Integer({ minimum: 0, default: 1_000 }),
});

type PastebinSettings = Static<typeof settings> & { item_url: string };

/** A content fetch that failed, kept to be tried again next run (the list may no longer show it). */
interface PendingPaste {
  entry: Record<string, unknown>;
  attempts: number;
}

/**
 * Where the collector stands: the newest list `date` (epoch seconds) it has taken and the keys
 * listed at that second, so a restart neither refetches nor skips a paste posted in the same
 * second; and the pastes whose content could not be fetched yet.
 */
interface PastebinCursor {
  date: number;
  keys: string[];
  retry: PendingPaste[];
}

/** Content fetches per paste before it is given up (each run tries once). */
export const MAX_ATTEMPTS = 3;
// Pastebin's answer for a paste removed between the list and the fetch: not worth retrying.
const GONE = /^Error, we cannot find this paste/;

/** The cursor as saved, or a fresh start for none (the first run takes the whole list). */
function cursorOf(saved: unknown): PastebinCursor {
  if (!isJsonObject(saved) || typeof saved.date !== 'number' || !Array.isArray(saved.keys))
    return { date: 0, keys: [], retry: [] };
  return {
    date: saved.date,
    keys: saved.keys as string[],
    retry: Array.isArray(saved.retry) ? (saved.retry as PendingPaste[]) : [],
  };
}

/** A response body as text, refused past `maxBytes` without reading the rest. */
async function cappedText(response: OutboundResponse, maxBytes: number): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) throw new Error(`larger than ${maxBytes >> 20} MiB`);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += chunk.length;
    if (size > maxBytes) throw new Error(`larger than ${maxBytes >> 20} MiB`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** fetch's own "fetch failed" hides the reason (refused, reset, DNS) in its cause. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause as { message?: string; code?: string } | undefined;
  return cause?.message || cause?.code ? `${error.message}: ${cause.message ?? cause.code}` : error.message;
}

async function fetchText(
  http: OutboundHttp,
  url: string,
  settings: PastebinSettings,
  signal: AbortSignal,
  maxBytes: number,
): Promise<string> {
  const response = await http
    .get(url, { signal: AbortSignal.any([signal, AbortSignal.timeout(settings.timeout_ms)]) })
    .catch((error: unknown) => {
      throw new Error(describe(error));
    });
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`HTTP ${response.status}`);
  }
  return cappedText(response, maxBytes);
}

/** The list: a JSON array. Anything else (Pastebin answers a non-whitelisted IP with a sentence) fails the run. */
async function fetchList(http: OutboundHttp, settings: PastebinSettings, signal: AbortSignal): Promise<unknown[]> {
  const body = await fetchText(http, settings.url, settings, signal, 16 << 20).catch((error: Error) => {
    throw new Error(`scraping list ${settings.url}: ${error.message}`);
  });
  let list: unknown;
  try {
    list = JSON.parse(body);
  } catch {
    list = null;
  }
  if (!Array.isArray(list))
    throw new Error(`scraping list ${settings.url}: not a JSON array: ${body.slice(0, 200).trim()}`);
  return list;
}

const isAfter = (cursor: PastebinCursor, entry: PastebinEntry) =>
  entry.dateSeconds > cursor.date || (entry.dateSeconds === cursor.date && !cursor.keys.includes(entry.key));

export const pastebinCollector = defineCollector({
  name: 'pastebin-scraping',
  description: "Fetches new public pastes from Pastebin's scraping API (a whitelisted IP) into the paste_site source",
  defaultIntervalSeconds: 300,
  enabledByDefault: false,
  settings,
  refine: (checked): PastebinSettings => ({
    ...checked,
    item_url: checked.item_url ?? `${new URL(checked.url).origin}/api_scrape_item.php?i=`,
  }),
  async run(context, run) {
    const { settings, signal } = run;
    const writer = createDocumentWriter(context, 'paste_site');
    const cursor = cursorOf(run.cursor);
    const listed: { entry: PastebinEntry; raw: Record<string, unknown> }[] = [];
    for (const raw of await fetchList(run.http, settings, signal)) {
      try {
        listed.push({ entry: pastebinEntry(raw), raw: raw as Record<string, unknown> });
      } catch (error) {
        if (!(error instanceof RecordError)) throw error;
        run.log(`list entry skipped: ${error.message}`);
      }
    }
    // Oldest first, so the cursor saved after each paste is where a killed run resumes.
    const fresh = listed
      .filter(({ entry }) => isAfter(cursor, entry))
      .sort((a, b) => a.entry.dateSeconds - b.entry.dateSeconds || a.entry.key.localeCompare(b.entry.key));
    const retried = cursor.retry.filter((pending) => !fresh.some(({ entry }) => entry.key === pending.entry.key));
    const queue = [
      ...retried.map((pending) => ({ raw: pending.entry, attempts: pending.attempts, isNew: false })),
      ...fresh.map(({ raw }) => ({ raw, attempts: 0, isNew: true })),
    ];
    const next: PastebinCursor = { date: cursor.date, keys: [...cursor.keys], retry: [] };
    const unfinished = (from: number) =>
      queue
        .slice(from)
        .filter((item) => !item.isNew)
        .map((item) => ({ entry: item.raw, attempts: item.attempts }));
    let items = 0;
    for (const [index, item] of queue.entries()) {
      if (index > 0 && settings.request_interval_ms > 0)
        await sleep(settings.request_interval_ms, undefined, { signal }).catch(() => undefined);
      if (signal.aborted) {
        // The retries not reached stay due; new pastes not reached are still after the cursor.
        next.retry.push(...unfinished(index));
        break;
      }
      const entry = pastebinEntry(item.raw);
      let content: string | null = null;
      try {
        content = await fetchText(
          run.http,
          settings.item_url + encodeURIComponent(entry.key),
          settings,
          signal,
          MAX_PASTE_BYTES,
        );
      } catch (error) {
        if (signal.aborted) {
          next.retry.push(...unfinished(index));
          break;
        }
        const reason = error instanceof Error ? error.message : String(error);
        const attempts = item.attempts + 1;
        if (attempts < MAX_ATTEMPTS) next.retry.push({ entry: item.raw, attempts });
        run.log(
          `${entry.key}: content not fetched (${reason}); ${attempts < MAX_ATTEMPTS ? 'tried again next run' : `given up after ${attempts} attempts`}`,
        );
      }
      if (content !== null && GONE.test(content)) run.log(`${entry.key}: removed before its content was fetched`);
      else if (content !== null)
        items += (await writer.write([pastebinDocument(entry, content)], context.clock.now().getTime())).added;
      if (item.isNew) {
        if (entry.dateSeconds > next.date) next.keys = [];
        next.date = Math.max(next.date, entry.dateSeconds);
        next.keys.push(entry.key);
      }
      await run.saveCursor({ ...next, retry: [...next.retry, ...unfinished(index + 1)] });
    }
    return { items, cursor: next };
  },
});
