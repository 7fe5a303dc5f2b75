import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';
import { scaled } from '../support/wait.ts';

const CLI_TEST_MS = scaled(120_000);

/**
 * docs/ingest.md "Messenger": messages are committed 1,000 at a time on SQLite, 10,000 on
 * PostgreSQL, not one source at once.
 */
const PER_TRANSACTION = testEngine === 'postgres' ? 10_000 : 1_000;

describe(`dragnet ingest messenger in transactions of ${PER_TRANSACTION} (${testEngine})`, () => {
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
    'a file that breaks after 2.5 transactions keeps the 2 committed before it; the fixed file adds only the rest',
    async () => {
      const lines = Array.from({ length: PER_TRANSACTION * 2.5 }, (_, i) => line(i + 1));
      const broken = path.join(location.dataDir, 'broken.jsonl');
      writeFileSync(broken, [...lines, '{"cut off', ''].join('\n'));
      const first = await runCli(['--json', 'ingest', 'messenger', broken], { env: location.env });
      expect(first.code).toBe(1);
      expect(JSON.parse(first.stdout)).toMatchObject({
        failed: 1,
        messages_added: PER_TRANSACTION * 2,
        results: [
          {
            ok: false,
            added: PER_TRANSACTION * 2,
            error: expect.stringMatching(new RegExp(`line ${lines.length + 1}, column \\d+: malformed JSON$`)),
          },
        ],
      });

      const fixed = path.join(location.dataDir, 'fixed.jsonl');
      writeFileSync(fixed, lines.join('\n') + '\n');
      const second = await runCli(['--json', 'ingest', 'messenger', fixed], { env: location.env });
      expect(second.code, second.stderr).toBe(0);
      expect(JSON.parse(second.stdout)).toMatchObject({
        failed: 0,
        messages_added: PER_TRANSACTION / 2,
        duplicates_skipped: PER_TRANSACTION * 2,
      });
    },
    CLI_TEST_MS,
  );
});
