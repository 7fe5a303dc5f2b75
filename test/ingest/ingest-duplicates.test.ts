import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { createTestStoreLocation, testEngine, type TestStoreLocation } from '../support/test-store.ts';
import { scaled } from '../support/wait.ts';
import { openStoreView, type StoreView } from './messenger-store.ts';

const CLI_TEST_MS = scaled(180_000);

/**
 * Duplicates in one file, as the writer keeps them on either store (PostgreSQL: COPY into a
 * staging table and one merge per transaction, src/db/pg-copy.ts): of two copies of a
 * message (same channel and message id) the first stands, in the same transaction or in a
 * later one, and the same file written again adds nothing. The file spans several transactions
 * of either store (1,000 messages on SQLite, 10,000 on PostgreSQL).
 */
describe(`dragnet ingest messenger keeps the first copy of a message (${testEngine})`, () => {
  let location: TestStoreLocation;
  let view: StoreView | undefined;

  beforeAll(async () => {
    location = await createTestStoreLocation();
  });
  afterAll(async () => {
    await view?.close();
    await location?.drop();
  });

  const line = (id: number, text: string) =>
    JSON.stringify({
      channel: { title: 'Echo Feed', username: 'echofeed' },
      message_id: id,
      date: 1_709_290_800 + id * 60,
      text,
    });

  it(
    'repeated ids add once with the first text; text COPY must escape arrives intact; a second run adds 0',
    async () => {
      const MESSAGES = 24_000;
      const lines = Array.from({ length: MESSAGES }, (_, i) => line(i + 1, `chatter number ${i + 1} end`));
      // Copies later in the same transaction (ids 2 and 3 right after them) and in later ones.
      const repeated = [2, 3, 9_999, 15_000];
      const copies = repeated.map((id) => line(id, `second copy of ${id}`));
      lines.splice(5, 0, copies[0]!, copies[1]!);
      lines.splice(12_000, 0, copies[2]!);
      lines.push(copies[3]!);
      // Tab, newline, carriage return, backslashes and COPY's own null marker, inside one text.
      const tricky = 'tab\there\nnew line\r\\N not null \\\\ two backslashes \\t literal';
      lines.push(line(MESSAGES + 1, tricky));
      const file = path.join(location.dataDir, 'echo.jsonl');
      writeFileSync(file, lines.join('\n') + '\n');

      const ingest = async () => {
        const result = await runCli(['--json', 'ingest', 'messenger', file], { env: location.env });
        expect(result.code, result.stderr).toBe(0);
        return JSON.parse(result.stdout) as { messages_added: number; duplicates_skipped: number };
      };
      expect(await ingest()).toMatchObject({ messages_added: MESSAGES + 1, duplicates_skipped: repeated.length });
      expect(await ingest()).toMatchObject({ messages_added: 0, duplicates_skipped: lines.length });

      view = await openStoreView(location);
      expect((await view.search('"second copy"')).total).toBe(0);
      for (const id of repeated) {
        const found = await view.search(`"chatter number ${id} end"`);
        expect(found.results.map((m) => [m.message_id, m.text_preview])).toEqual([[id, `chatter number ${id} end`]]);
      }
      const stored = await view.search('"two backslashes"');
      expect(stored.results.map((m) => m.text_preview)).toEqual([tricky]);
    },
    CLI_TEST_MS,
  );
});
