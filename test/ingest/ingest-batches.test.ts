import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';
import { scaled } from '../support/wait.ts';

const CLI_TEST_MS = scaled(120_000);

/** docs/ingest.md "Messenger": messages are committed 1,000 at a time, not one source at once. */
describe(`dragnet ingest messenger in transactions of 1,000 (${testEngine})`, () => {
  let location: TestStoreLocation;

  beforeAll(async () => {
    location = await createTestStoreLocation();
  });
  afterAll(async () => location?.drop());

  const line = (id: number) =>
    JSON.stringify({
      channel: { title: 'Batch Feed', username: 'batchfeed' },
      message_id: id,
      date: 1_709_290_800 + id,
      text: `batched message ${id}`,
    });

  it(
    'a file that breaks after 2,500 lines keeps the 2,000 committed before it; the fixed file adds only the rest',
    async () => {
      const lines = Array.from({ length: 2500 }, (_, i) => line(i + 1));
      const broken = path.join(location.dataDir, 'broken.jsonl');
      writeFileSync(broken, [...lines, '{"cut off', ''].join('\n'));
      const first = await runCli(['--json', 'ingest', 'messenger', broken], { env: location.env });
      expect(first.code).toBe(1);
      expect(JSON.parse(first.stdout)).toMatchObject({
        failed: 1,
        messages_added: 2000,
        results: [{ ok: false, added: 2000, error: expect.stringMatching(/line 2501, column \d+: malformed JSON$/) }],
      });

      const fixed = path.join(location.dataDir, 'fixed.jsonl');
      writeFileSync(fixed, lines.join('\n') + '\n');
      const second = await runCli(['--json', 'ingest', 'messenger', fixed], { env: location.env });
      expect(second.code, second.stderr).toBe(0);
      expect(JSON.parse(second.stdout)).toMatchObject({ failed: 0, messages_added: 500, duplicates_skipped: 2000 });
    },
    CLI_TEST_MS,
  );
});
