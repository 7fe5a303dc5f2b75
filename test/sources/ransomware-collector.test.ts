import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findSource } from '../../src/modules/sources/index.ts';
import { runCli, repoRoot, type CliResult } from '../support/cli.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';
import { scaled } from '../support/wait.ts';

/**
 * The ransomware-live collector through `dragnet collectors run` on a fresh store, polling a
 * real local HTTP server that serves a posts.json (the ransomware.live excerpt from
 * ../shared/fixtures when present, else made-up posts of the same shape) with an ETag and a
 * Last-Modified, and answers 304 when the request's validators match.
 */

// Each command is a fresh Node process (bin/dragnet.js on dist/): under a second each, seconds on a busy machine.
const CLI_TEST_MS = scaled(300_000);

const FIXTURE = path.resolve(repoRoot, '..', 'shared', 'fixtures', 'ransomware_live', 'posts.excerpt.json');
const fallbackPosts = Array.from({ length: 6 }, (_, i) => ({
  post_title: `Example Victim ${i + 1} Ltd`,
  group_name: 'play',
  discovered: `2023-08-0${i + 1} 10:00:00.000000`,
  description: '',
  website: `victim${i + 1}.example`,
  published: `2023-08-0${i + 1} 09:00:00.000000`,
  post_url: '',
}));
const basePosts = (existsSync(FIXTURE) ? JSON.parse(readFileSync(FIXTURE, 'utf8')) : fallbackPosts) as Record<
  string,
  unknown
>[];
const newPosts = [
  {
    post_title: 'Acme Bank PLC',
    group_name: 'lockbit3',
    discovered: '2026-03-10 08:00:00.000000',
    description: '',
    website: 'acme-bank.com',
    published: '2026-03-10 07:00:00.000000',
    post_url: '',
  },
  {
    post_title: 'Globex Manufacturing',
    group_name: 'akira',
    discovered: '2026-03-10 08:30:00.000000',
    description: 'Ontario, Canada',
    website: '',
    published: '2026-03-10 08:10:00.000000',
    post_url: '',
  },
];

interface Feed {
  status: number;
  body: string;
  etag: string;
  lastModified: string;
}

/** A posts feed that honours If-None-Match, and If-Modified-Since when no ETag is sent. */
function startFeedServer(feed: Feed): Promise<{ server: Server; url: string; requests: IncomingHttpHeaders[] }> {
  const requests: IncomingHttpHeaders[] = [];
  const server = createServer((request, response) => {
    requests.push(request.headers);
    if (feed.status !== 200) {
      response.writeHead(feed.status, { 'content-type': 'text/plain' }).end('feed unavailable');
      return;
    }
    const validators = { etag: feed.etag, 'last-modified': feed.lastModified };
    const ifNoneMatch = request.headers['if-none-match'];
    const ifModifiedSince = request.headers['if-modified-since'];
    const unchanged =
      ifNoneMatch !== undefined
        ? ifNoneMatch === feed.etag
        : ifModifiedSince !== undefined && Date.parse(ifModifiedSince) >= Date.parse(feed.lastModified);
    if (unchanged) {
      response.writeHead(304, validators).end();
      return;
    }
    response.writeHead(200, { ...validators, 'content-type': 'application/json' }).end(feed.body);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/posts.json`, requests }),
    );
  });
}

describe(`dragnet collectors run ransomware-live (${testEngine})`, () => {
  let location: TestStoreLocation;
  let dir: string;
  let feedServer: Awaited<ReturnType<typeof startFeedServer>>;
  let env: Record<string, string>;
  // Opened first, so the store's migrations are this code's even if the tree changes under a long run.
  let t: TestApp;
  const feed: Feed = {
    status: 200,
    body: JSON.stringify(basePosts),
    etag: '"posts-v1"',
    lastModified: 'Wed, 02 Aug 2023 23:59:45 GMT',
  };
  const cli = (args: string[]): Promise<CliResult> => runCli(args, { env, timeoutMs: scaled(60_000) });
  const status = async () => {
    const result = await cli(['--json', 'collectors']);
    expect(result.code, result.stderr).toBe(0);
    return (
      JSON.parse(result.stdout) as {
        name: string;
        cursor: unknown;
        last_error: string | null;
        items_total: number;
        consecutive_failures: number;
      }[]
    ).find((collector) => collector.name === 'ransomware-live')!;
  };
  const run = () => cli(['collectors', 'run', 'ransomware-live']);

  beforeAll(async () => {
    location = await createTestStoreLocation();
    t = await createTestApp({ location });
    dir = mkdtempSync(path.join(tmpdir(), 'dragnet-ransomware-collector-'));
    feedServer = await startFeedServer(feed);
    const collectorsFile = path.join(dir, 'collectors.json');
    writeFileSync(collectorsFile, JSON.stringify({ 'ransomware-live': { url: feedServer.url, timeout_ms: 10_000 } }));
    env = { ...location.env, DRAGNET_COLLECTORS_FILE: collectorsFile };
  });
  afterAll(async () => {
    await new Promise((resolve) => feedServer?.server.close(resolve));
    await t?.close();
    await location?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(
    'stores the feed, sends its validators next time and stores nothing on a 304, then only the new posts; a 500 keeps the cursor',
    async () => {
      const first = await run();
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout.trim()).toBe(`ransomware-live: ${basePosts.length} items stored`);
      expect(feedServer.requests[0]).not.toHaveProperty('if-none-match');
      expect(feedServer.requests[0]).not.toHaveProperty('if-modified-since');
      expect(await status()).toMatchObject({
        cursor: { etag: '"posts-v1"', last_modified: feed.lastModified },
        items_total: basePosts.length,
      });

      const unchanged = await run();
      expect(unchanged.code, unchanged.stderr).toBe(0);
      expect(unchanged.stdout.trim()).toBe('ransomware-live: 0 items stored');
      expect(feedServer.requests[1]).toMatchObject({
        'if-none-match': '"posts-v1"',
        'if-modified-since': feed.lastModified,
      });

      // The list grows and is re-sent whole: only the new posts are stored.
      Object.assign(feed, {
        body: JSON.stringify([...basePosts, ...newPosts]),
        etag: '"posts-v2"',
        lastModified: 'Tue, 10 Mar 2026 08:30:00 GMT',
      });
      const grown = await run();
      expect(grown.code, grown.stderr).toBe(0);
      expect(grown.stdout.trim()).toBe('ransomware-live: 2 items stored');
      expect(feedServer.requests[2]).toMatchObject({ 'if-none-match': '"posts-v1"' });
      expect(await status()).toMatchObject({
        cursor: { etag: '"posts-v2"', last_modified: 'Tue, 10 Mar 2026 08:30:00 GMT' },
        items_total: basePosts.length + 2,
      });

      feed.status = 500;
      const failed = await run();
      expect(failed.code).toBe(1);
      expect(failed.stdout.trim()).toBe(`ransomware-live: failed: ${feedServer.url} answered HTTP 500`);
      expect(await status()).toMatchObject({
        cursor: { etag: '"posts-v2"' },
        last_error: `${feedServer.url} answered HTTP 500`,
        consecutive_failures: 1,
      });

      const { rows } = await sql<{
        victim: string;
        group_name: string;
      }>`select victim, group_name from ransomware_posts order by id`.execute(t.container.store.db);
      expect(rows).toHaveLength(basePosts.length + 2);
      expect(rows.slice(-2)).toEqual([
        { victim: 'Acme Bank PLC', group_name: 'lockbit3' },
        { victim: 'Globex Manufacturing', group_name: 'akira' },
      ]);
    },
    CLI_TEST_MS,
  );

  it('a feed that does not answer, or stalls mid-body, within timeout_ms fails the run; a shutdown stops it', async () => {
    // /slow-headers never answers; /slow-body sends its headers and the start of a list, then stalls.
    const slow = createServer((request, response) => {
      if (request.url === '/slow-body')
        response.writeHead(200, { 'content-type': 'application/json' }).write('[{"post_title": "A", ');
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
    const collector = findSource(10)!.collectors!.find((c) => c.name === 'ransomware-live')!;
    const runOf = (url: string, signal = new AbortController().signal) =>
      collector.run(t.container.sourceContext, {
        settings: collector.parseSettings({ url, timeout_ms: 300 }),
        cursor: null,
        saveCursor: async () => {},
        signal,
        http: t.container.collectorHttp,
        log: () => {},
      });
    try {
      await expect(runOf(`${base}/slow-headers`)).rejects.toThrow(
        `${base}/slow-headers: no complete answer within 300 ms`,
      );
      await expect(runOf(`${base}/slow-body`)).rejects.toThrow(`${base}/slow-body: no complete answer within 300 ms`);
      const shutdown = new AbortController();
      const running = runOf(`${base}/slow-headers`, shutdown.signal);
      shutdown.abort();
      await expect(running).rejects.toThrow(/abort/i);
    } finally {
      slow.closeAllConnections();
      await new Promise((resolve) => slow.close(resolve));
    }
  });

  it(
    'a wrong setting is named at start-up',
    async () => {
      writeFileSync(
        env.DRAGNET_COLLECTORS_FILE!,
        JSON.stringify({ 'ransomware-live': { url: 'ftp://example.test/posts.json' } }),
      );
      const result = await run();
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain('ransomware-live.url: must be an http(s) URL');
    },
    CLI_TEST_MS,
  );
});
