import { Readable } from 'node:stream';
import { Type, type Static } from '@sinclair/typebox';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { newInputResult } from '../common/ingest/ingest-kit.ts';
import { HTTP_URL_FORMAT } from '../kit/collector-settings.ts';
import { defineCollector, type CollectorOutcome, type CollectorRun, type SourceContext } from '../kit/source.ts';
import { readPosts, storePosts } from './post-ingest.ts';

export const DEFAULT_FEED_URL = 'https://api.ransomware.live/v2/recentvictims';

/**
 * The `ransomware-live` collector (docs/collectors.md): polls one ransomware.live JSON URL (the
 * v2 recent victims, or a whole posts.json) and stores its posts as `dragnet ingest ransomware`
 * does. The feed is a list that grows, re-sent whole: a conditional GET (ETag, Last-Modified)
 * makes an unchanged list a 304, and the posts' unique key makes a changed one add only the
 * posts not yet stored.
 */
const settings = Type.Object({
  url: Type.String({ format: HTTP_URL_FORMAT, default: DEFAULT_FEED_URL }),
  timeout_ms: Type.Integer({ minimum: 1, maximum: 600_000, default: 60_000 }),
});

type Settings = Static<typeof settings>;

/** What the collector keeps between runs: the validators of the last list it stored. */
interface Cursor {
  etag: string | null;
  last_modified: string | null;
}

function cursorOf(value: unknown): Cursor {
  const stored = (typeof value === 'object' && value !== null ? value : {}) as Partial<Record<keyof Cursor, unknown>>;
  const text = (field: unknown) => (typeof field === 'string' && field !== '' ? field : null);
  return { etag: text(stored.etag), last_modified: text(stored.last_modified) };
}

/** One conditional GET of the feed; the posts of a 200 are stored, and its validators are the next cursor. */
async function fetchAndStore(
  context: SourceContext,
  { url, timeout_ms: timeoutMs }: Settings,
  cursor: Cursor,
  run: CollectorRun<Settings>,
): Promise<CollectorOutcome> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (cursor.etag) headers['if-none-match'] = cursor.etag;
  if (cursor.last_modified) headers['if-modified-since'] = cursor.last_modified;
  // The timeout covers the body too: fetch aborts the body stream when the signal fires.
  const response = await run.http.get(url, {
    headers,
    signal: AbortSignal.any([run.signal, AbortSignal.timeout(timeoutMs)]),
  });
  if (response.status === 304) {
    run.log('not modified since the last run');
    return { items: 0, cursor };
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    throw new Error(`${url} answered HTTP ${response.status}`);
  }
  const result = newInputResult(url);
  await storePosts(context, readPosts(Readable.fromWeb(response.body as WebReadableStream), url), result);
  if (!result.ok) throw new Error(result.error);
  run.log(
    `${result.records} posts read, ${result.added} new, ${result.duplicates} already stored, ${result.rejected} rejected`,
  );
  for (const rejection of result.rejections.slice(0, 5)) run.log(`rejected ${rejection.location}: ${rejection.reason}`);
  const next: Cursor = { etag: response.headers.get('etag'), last_modified: response.headers.get('last-modified') };
  return { items: result.added, cursor: next };
}

export const ransomwareLiveCollector = defineCollector({
  name: 'ransomware-live',
  description:
    'new leak-site posts from a ransomware.live JSON feed (conditional GET: an unchanged feed is not downloaded again)',
  defaultIntervalSeconds: 3600,
  enabledByDefault: false,
  settings,
  async run(context, run) {
    const { url, timeout_ms: timeoutMs } = run.settings;
    try {
      return await fetchAndStore(context, run.settings, cursorOf(run.cursor), run);
    } catch (error) {
      if ((error as Error).name === 'TimeoutError')
        throw new Error(`${url}: no complete answer within ${timeoutMs} ms`);
      throw error;
    }
  },
});
