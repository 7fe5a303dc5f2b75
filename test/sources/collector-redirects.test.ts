import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveryUser, webhookBody } from '../support/delivery-api.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

/**
 * The three network collectors behind the outbound guard: the feeds are on an allowed loopback
 * port; their redirects point at another loopback port that is not allowed (a listener there
 * counts connections and would serve a valid feed) or at 169.254.169.254, refused before any
 * connection. Run in-process through the collector runner, as `dragnet collectors run` does.
 */
const posts = [
  {
    post_title: 'Internal Only Ltd',
    group_name: 'play',
    discovered: '2026-03-10 08:00:00.000000',
    description: '',
    website: 'internal.example',
    published: '2026-03-10 07:00:00.000000',
    post_url: '',
  },
];
const pastes = [
  {
    key: 'internal1',
    date: '1773129600',
    title: 'x',
    size: '5',
    expire: '0',
    syntax: 'text',
    user: '',
    scrape_url: '',
    full_url: '',
  },
];

const listen = (server: Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
const close = (server: Server | undefined) =>
  new Promise((resolve) => (server ? (server.closeAllConnections(), server.close(resolve)) : resolve(undefined)));

describe(`collectors do not follow redirects the guard refuses (${testEngine})`, () => {
  let t: TestApp;
  let dir: string;
  let feed: Server;
  const feedPaths: string[] = [];
  let internal: Server;
  let internalConnections = 0;
  let other: Server;
  const otherRequests: Array<Record<string, string | string[] | undefined>> = [];

  beforeAll(async () => {
    // What an internal service would answer: a valid feed of each kind.
    internal = createServer((request, response) => {
      const body = request.url!.startsWith('/paste')
        ? pastes
        : request.url!.includes('get-sth')
          ? { tree_size: 1 }
          : posts;
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    internal.on('connection', () => internalConnections++);
    const internalPort = await listen(internal);
    // Another origin the operator allows, where a feed's redirect may lead.
    other = createServer((request, response) => {
      otherRequests.push(request.headers);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(posts));
    });
    const otherPort = await listen(other);
    feed = createServer((request, response) => {
      const url = request.url!;
      feedPaths.push(url);
      if (url === '/hook') return void response.writeHead(204).end();
      if (url === '/ok/posts.json')
        return void response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(posts));
      if (url === '/hop/posts.json') return void response.writeHead(301, { location: '/ok/posts.json' }).end();
      if (url === '/loop/posts.json') return void response.writeHead(302, { location: url }).end();
      // A feed that answers with an ETag, then sends the conditional GET on to another origin.
      if (url === '/moved/posts.json') {
        if (request.headers['if-none-match'] === undefined)
          return void response
            .writeHead(200, { 'content-type': 'application/json', etag: '"v1"' })
            .end(JSON.stringify(posts));
        return void response.writeHead(302, { location: `http://127.0.0.1:${otherPort}/posts.json` }).end();
      }
      // Not a list: a banner with a NUL and bytes that are not UTF-8, which the run's error quotes.
      if (url === '/banner/api_scraping.php')
        return void response.writeHead(200).end(Buffer.from([0x4a, 0x00, 0x0a, 0x35, 0x2e, 0x37, 0xff, 0xfe, 0x00]));
      const target = url.startsWith('/metadata')
        ? 'http://169.254.169.254/latest/meta-data/'
        : `http://127.0.0.1:${internalPort}${url}`;
      response.writeHead(302, { location: target }).end();
    });
    const feedPort = await listen(feed);
    const base = `http://127.0.0.1:${feedPort}`;
    dir = mkdtempSync(path.join(tmpdir(), 'dragnet-collector-redirects-'));
    const collectorsFile = path.join(dir, 'collectors.json');
    writeFileSync(
      collectorsFile,
      JSON.stringify({
        'ransomware-live': { url: `${base}/posts.json`, timeout_ms: 5000 },
        'pastebin-scraping': { url: `${base}/paste/api_scraping.php`, timeout_ms: 5000, request_interval_ms: 0 },
        'ct-logs': { logs: [`${base}/metadata/log/`], start: '0', timeout_ms: 5000 },
      }),
    );
    t = await createTestApp({
      env: { DRAGNET_COLLECTORS_FILE: collectorsFile, DRAGNET_OUTBOUND_ALLOW_HOSTS: `127.0.0.1:${feedPort}` },
    });
  });
  afterAll(async () => {
    await t?.close();
    await close(feed);
    await close(internal);
    await close(other);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const count = async (table: string) =>
    Number(
      (await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(t.container.store.db)).rows[0]!
        .n,
    );

  it('a 302 to a loopback port that is not allowed, or to 169.254.169.254, fails the run without connecting, and nothing is stored', async () => {
    const reports = await t.container.collectors.runNow(['ransomware-live', 'pastebin-scraping', 'ct-logs']);
    for (const report of reports) {
      expect(report, report.name).toMatchObject({ outcome: 'failed', items: 0 });
      expect(report.error, report.name).toMatch(/not a public address/);
    }
    expect(reports.find((r) => r.name === 'ct-logs')!.error).toContain('169.254.169.254');
    expect(internalConnections).toBe(0);
    expect(await count('ransomware_posts')).toBe(0);
    expect(await count('documents')).toBe(0);
    expect(await count('certificates')).toBe(0);
  });

  let collectorFiles = 0;
  /** A second app whose collectors file holds `collectors`, with only the feed's port allowed unless `env` says otherwise. */
  async function withCollectors(
    collectors: Record<string, unknown>,
    use: (app: TestApp) => Promise<void>,
    env: Record<string, string> = {},
  ) {
    const feedPort = (feed.address() as AddressInfo).port;
    const collectorsFile = path.join(dir, `collectors-${++collectorFiles}.json`);
    writeFileSync(collectorsFile, JSON.stringify(collectors).replaceAll('FEED', `http://127.0.0.1:${feedPort}`));
    const app = await createTestApp({
      env: { DRAGNET_COLLECTORS_FILE: collectorsFile, DRAGNET_OUTBOUND_ALLOW_HOSTS: `127.0.0.1:${feedPort}`, ...env },
    });
    try {
      await use(app);
    } finally {
      await app.close();
    }
  }

  it('a redirect within what is allowed is followed, each hop through the guard', async () => {
    await withCollectors({ 'ransomware-live': { url: 'FEED/hop/posts.json', timeout_ms: 5000 } }, async (hop) => {
      expect(await hop.container.collectors.runNow(['ransomware-live'])).toEqual([
        { name: 'ransomware-live', outcome: 'ran', items: 1 },
      ]);
    });
  });

  it("a feed's answer quoted in a run's error is stored without its NUL and control bytes", async () => {
    await withCollectors(
      { 'pastebin-scraping': { url: 'FEED/banner/api_scraping.php', timeout_ms: 5000 } },
      async (banner) => {
        expect(await banner.container.collectors.runNow(['pastebin-scraping'])).toMatchObject([{ outcome: 'failed' }]);
        const state = (await banner.container.collectors.status()).find(
          (collector) => collector.name === 'pastebin-scraping',
        )!;
        expect(state.last_error).toMatch(/not a JSON array: J.*5\.7/);
        expect(state.last_error).not.toContain('\u0000');
      },
    );
  });

  it('a feed that keeps redirecting fails the run with its own error, not as a refusal', async () => {
    await withCollectors({ 'ransomware-live': { url: 'FEED/loop/posts.json', timeout_ms: 5000 } }, async (loop) => {
      const [report] = await loop.container.collectors.runNow(['ransomware-live']);
      expect(report).toMatchObject({ outcome: 'failed', items: 0 });
      expect(report!.error).toMatch(/gave up after 5 redirects/);
      expect(report!.error).not.toMatch(/not a public address|refused/);
    });
  });

  it("a redirect to another origin goes without the feed's validators", async () => {
    const otherPort = (other.address() as AddressInfo).port;
    await withCollectors(
      { 'ransomware-live': { url: 'FEED/moved/posts.json', timeout_ms: 5000 } },
      async (moved) => {
        expect(await moved.container.collectors.runNow(['ransomware-live'])).toMatchObject([
          { outcome: 'ran', items: 1 },
        ]);
        // The second run sends If-None-Match "v1" to the feed, which redirects it to the other origin.
        expect(await moved.container.collectors.runNow(['ransomware-live'])).toMatchObject([{ outcome: 'ran' }]);
        expect(otherRequests).toHaveLength(1);
        expect(otherRequests[0]).not.toHaveProperty('if-none-match');
        expect(otherRequests[0]).toMatchObject({ accept: 'application/json' });
      },
      { DRAGNET_OUTBOUND_ALLOW_HOSTS: `127.0.0.1:${(feed.address() as AddressInfo).port},127.0.0.1:${otherPort}` },
    );
  });

  it('a feed on the collector allow-list only is reachable by its collector, and refused to a tenant webhook', async () => {
    const feedPort = (feed.address() as AddressInfo).port;
    await withCollectors(
      { 'ransomware-live': { url: 'FEED/ok/posts.json', timeout_ms: 5000 } },
      async (app) => {
        expect(await app.container.collectors.runNow(['ransomware-live'])).toMatchObject([
          { outcome: 'ran', items: 1 },
        ]);
        const tenant = await deliveryUser(app, 'Acme', 'alice@acme.test');
        const created = await tenant.create(
          'webhook',
          webhookBody('internal-feed', { url: `http://127.0.0.1:${feedPort}/hook` }),
        );
        expect(created.statusCode, created.body).toBe(201);
        const tested = await tenant.testWebhook(created.json().id);
        expect(tested.json()).toMatchObject({
          status: 'failed',
          status_code: null,
          error: expect.stringMatching(/^refused: address 127\.0\.0\.1 is not a public address/),
        });
        expect(feedPaths).not.toContain('/hook');
      },
      { DRAGNET_OUTBOUND_ALLOW_HOSTS: '', DRAGNET_COLLECTOR_ALLOW_HOSTS: `127.0.0.1:${feedPort}` },
    );
  });
});
