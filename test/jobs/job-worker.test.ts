import { Type } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindJob, defineJob } from '../../src/jobs/define-job.ts';
import { createJobQueue, createJobWorker } from '../../src/jobs/job-queue.ts';
import { createWorkerPresence } from '../../src/jobs/worker-presence.ts';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import { testEngine } from '../support/test-store.ts';

/**
 * A queued row that names no job of the worker's list, or whose payload its job's schema
 * refuses (a row from another version of the code, or written by hand), fails for good with its
 * reason recorded and logged; the worker goes on to the rows after it.
 */
describe(`job worker: a row it cannot run fails alone (${testEngine})`, () => {
  let t: TestApp;
  const containerLog: string[] = [];

  beforeAll(async () => {
    t = await createTestApp({ log: (message) => containerLog.push(message) });
  });
  afterAll(async () => {
    await t?.close();
  });

  const insertRow = (type: string, key: string, payload: string) =>
    t.container.store.db
      .insertInto('jobs')
      .values({
        type,
        job_key: key,
        payload,
        status: 'queued',
        run_after: t.clock.now().getTime(),
        created_at: t.clock.now().getTime(),
      })
      .execute();
  const rowsByKey = async (keys: string[]) =>
    (
      await t.container.store.db
        .selectFrom('jobs')
        .select(['job_key', 'status', 'error', 'attempts'])
        .where('job_key', 'in', keys)
        .orderBy('id')
        .execute()
    ).map((row) => ({ ...row, attempts: Number(row.attempts) }));

  it('fails a row naming no job, one whose payload is not JSON and one its schema refuses, and runs the others', async () => {
    const { db, engine } = t.container.store;
    const seen: number[] = [];
    const log: string[] = [];
    const recordJob = defineJob({
      id: 'test.record',
      payload: Type.Object({ n: Type.Integer() }),
      handler: async ({ n }, context: { seen: number[] }) => {
        context.seen.push(n);
      },
    });
    const presence = createWorkerPresence({ db, clock: t.clock, heartbeatMs: 1_000 });
    const worker = createJobWorker({
      db,
      engine,
      clock: t.clock,
      presence,
      log: (message) => log.push(message),
      jobs: [bindJob(recordJob, { seen })],
    });
    const queue = createJobQueue({ db, clock: t.clock });
    try {
      await queue.enqueue(recordJob, 'record:1', { n: 1 });
      await insertRow('test.gone', 'record:2', '{"n":2}');
      await insertRow('test.record', 'record:3', '{"n":"three"}');
      await insertRow('test.record', 'record:4', '{"n":4');
      await queue.enqueue(recordJob, 'record:5', { n: 5 });

      expect(await worker.runDue()).toBe(5);
      expect(await worker.runDue()).toBe(0);
      expect(seen).toEqual([1, 5]);
      expect(await rowsByKey(['record:1', 'record:2', 'record:3', 'record:4', 'record:5'])).toEqual([
        { job_key: 'record:1', status: 'done', error: null, attempts: 1 },
        { job_key: 'record:2', status: 'failed', error: 'no job has the id test.gone', attempts: 1 },
        {
          job_key: 'record:3',
          status: 'failed',
          error: expect.stringMatching(/^its payload does not match the job's schema: \/n: /),
          attempts: 1,
        },
        { job_key: 'record:4', status: 'failed', error: 'its payload is not JSON', attempts: 1 },
        { job_key: 'record:5', status: 'done', error: null, attempts: 1 },
      ]);
      expect(log).toEqual([
        expect.stringMatching(/^job \d+ \(test\.gone\) failed for good: no job has the id test\.gone$/),
        expect.stringMatching(
          /^job \d+ \(test\.record\) failed for good: its payload does not match the job's schema: \/n: /,
        ),
        expect.stringMatching(/^job \d+ \(test\.record\) failed for good: its payload is not JSON$/),
      ]);
    } finally {
      await presence.close();
    }
  });

  it("the container's worker fails an async rule run's row whose payload is not a run", async () => {
    await insertRow('rules.complete-async-run', 'run:malformed', '{"runId":"7","matchId":8}');
    expect(await t.container.jobs.runDue()).toBe(1);
    expect(await rowsByKey(['run:malformed'])).toEqual([
      {
        job_key: 'run:malformed',
        status: 'failed',
        error: expect.stringMatching(/^its payload does not match the job's schema: /),
        attempts: 1,
      },
    ]);
    expect(containerLog).toContainEqual(
      expect.stringMatching(
        /^job \d+ \(rules\.complete-async-run\) failed for good: its payload does not match the job's schema: \/runId: /,
      ),
    );
  });
});
