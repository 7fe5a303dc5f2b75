import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './support/cli.ts';
import { spawnCli } from './support/cli-process.ts';
import { expectError } from './support/http.ts';
import { search } from './support/messenger-search.ts';
import { createTestApp, type TestApp } from './support/test-app.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from './support/test-store.ts';
import { scaled, waitFor } from './support/wait.ts';

/**
 * Feeding Dragnet from elsewhere (docs/collectors.md): POST /ingest/<ingester>/ for system
 * accounts, the collectors' health over HTTP and on the CLI, the inbox folder, a failing
 * collector's backoff, and a worker process that runs collectors on its own.
 */

const INGEST_LIMIT = 4096;

const message = (id: number, text: string) =>
  JSON.stringify({
    channel: { platform: 'telegram', id: '-100777', username: 'pushfeed', title: 'Push Feed' },
    message_id: id,
    date: '2026-03-10T08:00:00Z',
    text,
  });

const ndjson = [
  message(1, 'pushed combo for globex-push.test'),
  message(2, 'second pushed line'),
  '{"channel":{"title":"x"},"text":"no id or date"}',
  message(3, 'third globex-push.test'),
].join('\n');

interface IngestAnswer {
  ingester: string;
  format: string;
  bytes: number;
  records: number;
  accepted: number;
  duplicates: number;
  rejected: number;
  errors: { location: string; reason: string }[];
}

interface CollectorStatus {
  name: string;
  source: string | null;
  enabled: boolean;
  interval_seconds: number;
  last_success_at: string | null;
  last_error: string | null;
  consecutive_failures: number;
  runs: number;
  items_last_run: number | null;
  items_total: number;
  next_run_at: string | null;
  last_error_at: string | null;
}

describe(`the ingestion endpoint (${testEngine})`, () => {
  let t: TestApp;
  let system: string;
  let member: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { DRAGNET_INGEST_MAX_BYTES: String(INGEST_LIMIT) } });
    await t.createUser({ org: 'Operators', email: 'ops@ingest.test', role: 'system' });
    await t.createUser({ org: 'Customer', email: 'member@ingest.test' });
    system = (await t.login('ops@ingest.test')).access;
    member = (await t.login('member@ingest.test')).access;
  });
  afterAll(async () => t?.close());

  const push = (
    url: string,
    body: string | Buffer,
    headers: Record<string, string> = { 'content-type': 'application/x-ndjson' },
    token = system,
  ) => t.app.inject({ method: 'POST', url, payload: body, headers: { authorization: `Bearer ${token}`, ...headers } });

  it('stores NDJSON records, rejects the bad ones with their line, and adds nothing when sent again', async () => {
    const first = await push('/ingest/messenger/?format=jsonl', ndjson);
    expect(first.statusCode, first.body).toBe(200);
    const answer = first.json<IngestAnswer>();
    expect(answer).toMatchObject({
      ingester: 'messenger',
      format: 'jsonl',
      bytes: Buffer.byteLength(ndjson),
      accepted: 3,
      duplicates: 0,
      rejected: 1,
    });
    expect(answer.errors).toHaveLength(1);
    expect(answer.errors[0]!.location).toMatch(/^line 3/);
    expect(answer.errors[0]!.location).not.toContain(t.location.env.DRAGNET_DATA_DIR ?? '/tmp/');

    const again = (await push('/ingest/messenger/?format=jsonl', ndjson)).json<IngestAnswer>();
    expect(again).toMatchObject({ accepted: 0, duplicates: 3, rejected: 1 });

    // What was pushed is searchable like anything ingested.
    const found = await search(t, member, { query: 'globex-push.test' });
    expect(found.total).toBe(2);
  });

  it('takes a gzip body and counts its decompressed bytes', async () => {
    const body = [message(10, 'zipped one'), message(11, 'zipped two')].join('\n');
    const response = await push('/ingest/messenger/?format=jsonl', gzipSync(body), {
      'content-type': 'application/x-ndjson',
      'content-encoding': 'gzip',
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json<IngestAnswer>()).toMatchObject({ accepted: 2, bytes: Buffer.byteLength(body) });
  });

  it('refuses a body over the limit with 413, announced or not, and a compressed one that inflates past it', async () => {
    const big = 'x'.repeat(INGEST_LIMIT + 1);
    await expectError(await push('/ingest/messenger/?format=jsonl', big), 413, 'payload_too_large');
    await expectError(
      await push('/ingest/messenger/?format=jsonl', gzipSync(big), {
        'content-type': 'application/x-ndjson',
        'content-encoding': 'gzip',
      }),
      413,
      'payload_too_large',
    );
    await expectError(
      await push('/ingest/messenger/?format=jsonl', 'x', {
        'content-type': 'application/x-ndjson',
        'content-encoding': 'br',
      }),
      415,
      'unsupported_media_type',
    );
  });

  it('names the field of a wrong request, and an unreadable body', async () => {
    await expectError(await push('/ingest/nothing_here/', ndjson), 404, 'not_found');
    const format = await expectError(await push('/ingest/messenger/?format=csv', ndjson), 400, 'validation_failed');
    expect(format.fields?.[0]?.field).toBe('format');
    const name = await expectError(
      await push('/ingest/messenger/?name=../escape.json', ndjson),
      400,
      'validation_failed',
    );
    expect(name.fields?.[0]?.field).toContain('name');
    const broken = await expectError(
      await push('/ingest/messenger/?format=telegram', '{"name": "cut off', { 'content-type': 'application/json' }),
      400,
      'validation_failed',
    );
    expect(broken.fields?.[0]?.field).toBe('body');
  });

  it('takes the shortener of a URLTeam dump without a header from ?shortener=', async () => {
    const dump = 'Zq81|https://globex-push.test/login\n';
    const plain = { 'content-type': 'text/plain' };
    const none = await expectError(await push('/ingest/url_shortener/', dump, plain), 400, 'validation_failed');
    expect(none.message).toContain('?shortener=v.gd');
    const given = await push('/ingest/url_shortener/?shortener=v.gd', dump, plain);
    expect(given.statusCode, given.body).toBe(200);
    expect(given.json<IngestAnswer>()).toMatchObject({ ingester: 'url_shortener', accepted: 1 });
    const bad = await expectError(
      await push('/ingest/url_shortener/?shortener=not%20a%20host', dump, plain),
      400,
      'validation_failed',
    );
    expect(bad.fields?.[0]?.field).toBe('shortener');
  });

  it('is for system accounts only, and so is the collectors list', async () => {
    await expectError(await push('/ingest/messenger/?format=jsonl', ndjson, undefined, member), 403, 'forbidden');
    await expectError(
      await t.app.inject({ method: 'POST', url: '/ingest/messenger/', payload: ndjson }),
      401,
      'unauthorized',
    );
    await expectError(await t.request({ method: 'GET', url: '/service/collectors/', token: member }), 403, 'forbidden');
    const listed = await t.request({ method: 'GET', url: '/service/collectors/', token: system });
    expect(listed.statusCode).toBe(200);
    const inbox = listed.json<CollectorStatus[]>().find((c) => c.name === 'inbox');
    expect(inbox).toMatchObject({ source: null, enabled: true, interval_seconds: 30, runs: 0, items_total: 0 });
  });
});

describe(`collectors on the CLI and in the worker (${testEngine})`, { timeout: scaled(120_000) }, () => {
  let location: TestStoreLocation;
  let dataDir: string;
  const collectors = async (args: string[], env: Record<string, string> = {}) =>
    runCli(['--json', 'collectors', ...args], { env: { ...location.env, ...env } });

  beforeAll(async () => {
    location = await createTestStoreLocation();
    dataDir = location.env.DRAGNET_DATA_DIR!;
  });
  afterAll(async () => location?.drop());

  it('the inbox ingests dropped files, files them under done/ or failed/ with a report, and skips files still being written', async () => {
    const folder = path.join(dataDir, 'inbox', 'messenger');
    mkdirSync(path.join(folder, 'jsonl'), { recursive: true });
    writeFileSync(
      path.join(folder, 'jsonl', 'feed.jsonl'),
      [message(21, 'inbox one'), message(22, 'inbox two')].join('\n'),
    );
    writeFileSync(path.join(folder, 'broken.json'), '{"messages": [');
    writeFileSync(path.join(folder, 'feed2.jsonl.part'), message(23, 'not yet'));

    // A file that fails is the file's outcome (failed/ and its report), not the collector's.
    const run = await collectors(['run', 'inbox']);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual([{ name: 'inbox', outcome: 'ran', items: 2 }]);

    const done = readdirSync(path.join(folder, 'done'));
    expect(done.filter((name) => name.endsWith('-feed.jsonl'))).toHaveLength(1);
    const report = JSON.parse(
      readFileSync(
        path.join(
          folder,
          'done',
          done.find((name) => name.endsWith('-feed.jsonl.report.json'))!,
        ),
        'utf8',
      ),
    );
    expect(report).toMatchObject({ format: 'jsonl', added: 2, rejected: 0 });
    const failed = readdirSync(path.join(folder, 'failed'));
    expect(failed.filter((name) => name.endsWith('-broken.json'))).toHaveLength(1);
    const failure = JSON.parse(
      readFileSync(
        path.join(
          folder,
          'failed',
          failed.find((name) => name.endsWith('.report.json'))!,
        ),
        'utf8',
      ),
    );
    expect(failure.errors[0].reason).toBeTruthy();
    expect(existsSync(path.join(folder, 'feed2.jsonl.part'))).toBe(true);

    const [inbox] = JSON.parse((await collectors([])).stdout) as CollectorStatus[];
    expect(inbox).toMatchObject({
      name: 'inbox',
      runs: 1,
      items_last_run: 2,
      items_total: 2,
      consecutive_failures: 0,
      last_error: null,
    });
    expect(inbox!.last_success_at).not.toBeNull();
  });

  it('a worker process runs due collectors on its own', async () => {
    const folder = path.join(dataDir, 'inbox', 'messenger', 'jsonl');
    mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(folder, 'worker.jsonl'), message(31, 'picked up by the worker'));
    const file = path.join(dataDir, 'collectors-fast.json');
    writeFileSync(file, JSON.stringify({ inbox: { interval_seconds: 1 } }));
    const worker = spawnCli(['worker'], {
      env: { ...location.env, DRAGNET_SCHEDULER_POLL_MS: '200', DRAGNET_COLLECTORS_FILE: file },
    });
    try {
      // The file leaves the inbox before the run's status is recorded: stopping the worker in
      // between (a loaded machine) would leave the run unrecorded and its claim held.
      const recorded = async () =>
        ((JSON.parse((await collectors([])).stdout) as CollectorStatus[])[0]?.items_total ?? 0) >= 3;
      await waitFor(
        'the file ingested and its run recorded',
        async () => !existsSync(path.join(folder, 'worker.jsonl')) && (await recorded()),
        {
          timeoutMs: scaled(60_000),
          everyMs: 200,
        },
      ).catch((error: Error) => {
        throw new Error(`${error.message}\n${worker.output().stderr}`);
      });
    } finally {
      worker.child.kill('SIGTERM');
      await worker.done;
    }
    const done = readdirSync(path.join(dataDir, 'inbox', 'messenger', 'done'));
    expect(done.some((name) => name.endsWith('worker.jsonl'))).toBe(true);
    const [inbox] = JSON.parse((await collectors([])).stdout) as CollectorStatus[];
    expect(inbox!.items_total).toBeGreaterThanOrEqual(3);
    expect(inbox!.last_success_at).not.toBeNull();
  });
  it('a collector that fails backs off, doubling the wait per failure in a row, and says why', async () => {
    // The inbox folder setting points at a file: every run fails to read it.
    const notAFolder = path.join(dataDir, 'not-a-folder');
    writeFileSync(notAFolder, '');
    const file = path.join(dataDir, 'collectors-broken.json');
    writeFileSync(file, JSON.stringify({ inbox: { folder: notAFolder, interval_seconds: 60 } }));
    const env = { DRAGNET_COLLECTORS_FILE: file };
    for (const failures of [1, 2]) {
      const run = await collectors(['run', 'inbox'], env);
      expect(run.code).toBe(1);
      expect(JSON.parse(run.stdout)[0]).toMatchObject({ name: 'inbox', outcome: 'failed' });
      const [inbox] = JSON.parse((await collectors([], env)).stdout) as CollectorStatus[];
      expect(inbox).toMatchObject({ consecutive_failures: failures, items_last_run: null });
      expect(inbox!.last_error).toMatch(/not-a-folder/);
      const wait = Date.parse(inbox!.next_run_at!) - Date.parse(inbox!.last_error_at!);
      expect(wait).toBe(60_000 * 2 ** failures);
    }
  });

  it('a wrong collectors file is an error naming the entry', async () => {
    const file = path.join(dataDir, 'collectors-wrong.json');
    writeFileSync(file, JSON.stringify({ nope: {} }));
    const unknown = await collectors([], { DRAGNET_COLLECTORS_FILE: file });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/"nope" is not a collector/);
    writeFileSync(file, JSON.stringify({ inbox: { interval_seconds: 0 } }));
    expect((await collectors([], { DRAGNET_COLLECTORS_FILE: file })).stderr).toMatch(
      /inbox\.interval_seconds: must be an integer >= 1/,
    );
    writeFileSync(file, JSON.stringify({ inbox: { colour: 'red' } }));
    expect((await collectors([], { DRAGNET_COLLECTORS_FILE: file })).stderr).toMatch(/inbox\.colour: is not a setting/);
  });
});
