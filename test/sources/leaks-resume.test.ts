import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { comboLine, generateCredentials } from '../../src/modules/sources/common/leaks/demo-credentials.ts';
import { runCli } from '../support/cli.ts';
import { spawnCli } from '../support/cli-process.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';
import { scaled, waitFor } from '../support/wait.ts';

/**
 * An ingest killed part-way through a combolist (kill -9, so nothing is flushed or closed) and
 * run again stores every credential exactly once: batches are whole, and the file's progress is
 * committed with each of them.
 */
const LINES = 60_000;

describe(`dragnet ingest filtered_leak, killed and run again (${testEngine})`, () => {
  let location: TestStoreLocation;
  let t: TestApp;
  let dir: string;
  let file: string;

  beforeAll(async () => {
    location = await createTestStoreLocation();
    t = await createTestApp({ location });
    dir = mkdtempSync(path.join(tmpdir(), 'dragnet-resume-'));
    file = path.join(dir, 'big-combo.txt');
    const out = createWriteStream(file);
    for (const record of generateCredentials({ seed: 77, count: LINES, domains: ['resume-demo.com'] })) {
      if (!out.write(`${comboLine(record)}\n`)) await once(out, 'drain');
    }
    out.end();
    await once(out, 'finish');
  });
  afterAll(async () => {
    await t?.close();
    await location?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const stored = async () => {
    const { rows } = await sql<{ n: number }>`select count(*) as n from leak_credentials`.execute(t.container.store.db);
    return Number(rows[0]!.n);
  };

  it(
    'resumes after the last stored batch: no credential lost, none twice',
    async () => {
      const first = spawnCli(['ingest', 'filtered_leak', file], { env: location.env });
      await waitFor('a first stored batch', async () => (await stored()) > 0, {
        timeoutMs: scaled(60_000),
        everyMs: 20,
      });
      first.child.kill('SIGKILL');
      const killed = await first.done;
      expect(killed.signal).toBe('SIGKILL');
      const before = await stored();
      expect(before).toBeGreaterThan(0);
      expect(before).toBeLessThan(LINES);

      const second = await runCli(['--json', 'ingest', 'filtered_leak', file], {
        env: location.env,
        timeoutMs: scaled(120_000),
      });
      expect(second.code, second.stderr).toBe(0);
      expect(JSON.parse(second.stdout)).toMatchObject({ added: LINES - before, rejected: 0 });
      expect(await stored()).toBe(LINES);
      const again = await runCli(['--json', 'ingest', 'filtered_leak', file], { env: location.env });
      expect(JSON.parse(again.stdout)).toMatchObject({ added: 0, duplicates_skipped: LINES });
    },
    scaled(180_000),
  );
});
