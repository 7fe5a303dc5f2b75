import fc from 'fast-check';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeCase, findingOf, sendCase, startFuzzTarget, type FuzzTarget } from './support/openapi-fuzz.ts';
import { testEngine } from './support/test-store.ts';
import { scaled } from './support/wait.ts';

/** Fixed, so CI replays the same cases; `npm run bench -- fuzz --seed` explores others. */
const SEED = 15_2026;
const RUNS = 2500;

/**
 * Issue #15: every operation of the OpenAPI document, fed generated values (schema-shaped and
 * hostile) over a real socket, answers without a 5xx, without dropping the connection, and
 * with the error body on every error. The 10,000-case run per store is `npm run bench -- fuzz`.
 */
describe(`fuzzing the API from its OpenAPI document (${testEngine})`, () => {
  let target: FuzzTarget;
  let dispatcher: Agent;

  beforeAll(async () => {
    target = await startFuzzTarget();
    dispatcher = new Agent({ connections: 1 });
  });
  afterAll(async () => {
    await dispatcher?.close();
    await target?.close();
  });

  it('generates cases for every operation the document lists', () => {
    const operations = target.operations.map((operation) => operation.operationId);
    expect(operations.length).toBeGreaterThan(40);
    expect(operations).toEqual(
      expect.arrayContaining([
        'login',
        'refreshToken',
        'verify2faEnrollment',
        'messengerSearchCreate',
        'updateAlertRule',
        'createExclusion',
        'ingest',
      ]),
    );
    const drawn = new Set(
      fc.sample(target.arbitrary, { seed: SEED, numRuns: RUNS }).map((fuzzCase) => fuzzCase.operationId),
    );
    expect([...operations].filter((operation) => !drawn.has(operation))).toEqual([]);
  });

  it(
    `answers ${RUNS} seeded cases without a 5xx, a dropped connection or an error without the error body`,
    async () => {
      await fc.assert(
        fc.asyncProperty(target.arbitrary, async (fuzzCase) => {
          const finding = findingOf(fuzzCase, await sendCase(target.baseUrl, fuzzCase, dispatcher));
          if (finding) throw new Error(`${finding}\n  ${describeCase(fuzzCase)}`);
        }),
        { seed: SEED, numRuns: RUNS },
      );
    },
    scaled(120_000),
  );
});
