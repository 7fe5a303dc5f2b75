import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot, runCli, type CliResult } from '../support/cli.ts';
import { createTestStoreLocation, type TestStoreLocation } from '../support/test-store.ts';
import { scaled } from '../support/wait.ts';
import { openStoreView, sortedLinks, type IngestSummary, type StoreView } from './messenger-store.ts';

/**
 * `dragnet ingest messenger` as a user runs it: the real CLI in a child process, its summary on
 * stdout, its progress on stderr, and what it stored read back through the HTTP API. The
 * samples are the hand-written ones in test/fixtures/messenger/ (see its README).
 */

// Paths as a user would type them in the repository (the CLI runs with cwd = repository root).
const FIXTURES = 'test/fixtures/messenger';
const CHANNEL = `${FIXTURES}/channel_export.json`;
const FULL = `${FIXTURES}/full_account_export.json`;
const COLLECTOR = `${FIXTURES}/collector.jsonl`;
const TRUNCATED = `${FIXTURES}/truncated_export.json`;
const BROKEN = `${FIXTURES}/broken_line.jsonl`;
const fixtureText = (relative: string) => readFileSync(path.join(repoRoot, relative), 'utf8');

// A zone far from UTC: dates written without a zone must still be read as UTC.
const NEW_YORK = { TZ: 'America/New_York' };
// Each command is a fresh Node process (bin/dragnet.js on dist/): under a second each, seconds on a busy machine.
const CLI_TEST_MS = scaled(180_000);

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

interface Fixture {
  location: TestStoreLocation;
  cli(args: string[], options?: { input?: string; env?: Record<string, string> }): Promise<CliResult>;
  ingestJson(
    args: string[],
    options?: { input?: string; env?: Record<string, string>; code?: number },
  ): Promise<IngestSummary>;
  /** An app reading the same store (opened on first use). */
  view(): Promise<StoreView>;
  tempFile(name: string, content: string): string;
}

/** A fresh store of its own for each test, so the tests can run side by side. */
async function fresh(): Promise<Fixture> {
  const location = await createTestStoreLocation();
  let view: StoreView | undefined;
  let tempDir: string | undefined;
  cleanups.push(async () => {
    await view?.close();
    await location.drop();
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  });
  const cli: Fixture['cli'] = (args, options = {}) =>
    runCli(args, {
      env: { ...location.env, DRAGNET_LOG_LEVEL: 'warn', ...options.env },
      input: options.input,
      timeoutMs: CLI_TEST_MS - 30_000,
    });
  return {
    location,
    cli,
    async ingestJson(args, options = {}) {
      const result = await cli(['--json', 'ingest', 'messenger', ...args], options);
      expect(result.code, result.stderr + result.stdout).toBe(options.code ?? 0);
      // --json is quiet: no progress lines mixed into machine-readable runs.
      expect(result.stderr).not.toContain('messages added');
      return JSON.parse(result.stdout) as IngestSummary;
    },
    async view() {
      view ??= await openStoreView(location);
      return view;
    },
    tempFile(name, content) {
      tempDir ??= mkdtempSync(path.join(tmpdir(), 'dragnet-ingest-'));
      const file = path.join(tempDir, name);
      writeFileSync(file, content);
      return file;
    },
  };
}

const lines = (text: string) => text.split('\n').filter((line) => line.trim() !== '');

describe.concurrent('dragnet ingest messenger', () => {
  it(
    'a public channel export: counts, service messages skipped, entities, links, media, dates; a second run adds nothing',
    async () => {
      const f = await fresh();
      const first = await f.ingestJson([CHANNEL], { env: NEW_YORK });
      expect(first).toEqual({
        sources: 1,
        failed: 0,
        channels: 1,
        messages_added: 8,
        duplicates_skipped: 0,
        rejected: 0,
        warnings: [],
        results: [
          {
            source: CHANNEL,
            format: 'telegram',
            ok: true,
            channels: 1,
            added: 8,
            duplicates: 0,
            rejected: [],
            warnings: {},
          },
        ],
      });

      // The same file again, human-readable: nothing added, every message a duplicate.
      const second = await f.cli(['ingest', 'messenger', CHANNEL], { env: NEW_YORK });
      expect(second.code, second.stderr).toBe(0);
      expect(lines(second.stdout)[0]).toBe(
        '1 sources (0 failed): 1 channels, 0 messages added, 8 duplicates skipped, 0 rejected',
      );
      // Not a terminal: the progress is one plain line per source on stderr, no bar, no escapes.
      expect(lines(second.stderr)).toEqual([
        `${CHANNEL}: 1 channels, 0 messages added, 8 duplicates skipped, 0 rejected`,
      ]);
      expect(second.stderr).not.toContain('\r');
      expect(second.stderr).not.toContain('\u001b[');

      const view = await f.view();
      const channels = await view.channels();
      expect(channels).toHaveLength(1);
      expect(channels[0]).toMatchObject({
        platform: 'telegram',
        platform_id: '1786543210',
        username: null,
        title: 'Dark Leaks Market',
        category_id: null,
        is_active: true,
        total_messages_scraped: 8,
      });
      expect(channels[0]!.last_scraped_at).not.toBeNull();

      const messages = await view.messages();
      // Entries 1 (create_channel) and 5 (pin_message) are service messages.
      expect([...messages.values()].map((m) => m.message_id).sort((a, b) => a - b)).toEqual([2, 3, 4, 6, 7, 8, 9, 10]);
      const m = (id: number) => messages.get(`Dark Leaks Market#${id}`)!;
      const noMedia = { has_media: false, media_type: null, file_name: null };

      expect(m(2)).toMatchObject({
        text_preview:
          'Fresh combolist for acme-bank.com — 12k lines. Mirror: https://files.example.net/acme-12k.zip, details in the post #combo',
        // from_id "channel…" is not a user.
        user_id: null,
        channel_username: null,
        // date_unixtime wins over the exporter's local-time date (15:30 at UTC+3).
        date: '2024-02-01T12:30:00.000Z',
        ...noMedia,
      });
      // A link entity (also found in the text, kept once) and a text_link's href.
      expect(sortedLinks(m(2).links)).toEqual([
        'https://files.example.net/acme-12k.zip',
        'https://t.me/darkleaksmarket/1',
      ]);

      expect(m(3)).toMatchObject({
        text_preview: 'Admin panel screenshot. Backup: https://mega.example.org/folder/Xk29',
        links: ['https://mega.example.org/folder/Xk29'],
        has_media: true,
        media_type: 'photo',
        date: '2024-02-01T13:02:11.000Z',
      });
      expect(m(4)).toMatchObject({
        text_preview: 'Sample of the acme-bank.com logs, full base in DM',
        has_media: true,
        media_type: 'document',
        file_name: 'acme_bank_logs.txt',
        links: null,
        date: '2024-02-01T14:20:05.000Z',
      });
      // The file itself was not exported, its file_name was.
      expect(m(6)).toMatchObject({
        has_media: true,
        media_type: 'video_file',
        file_name: 'checker_tutorial.mp4',
        text_preview: 'How to run the checker',
      });
      // No caption: stored for its media; the name comes from the file path.
      expect(m(7)).toMatchObject({
        text_preview: '',
        has_media: true,
        media_type: 'sticker',
        file_name: 'sticker.webp',
        links: null,
      });
      expect(m(10)).toMatchObject({
        text_preview: '',
        has_media: true,
        media_type: 'voice_message',
        file_name: 'audio_1@02-02-2024_15-00-00.ogg',
      });
      // Only `date`, no zone: read as UTC (the CLI ran with TZ=America/New_York).
      expect(m(8)).toMatchObject({
        text_preview: 'Price list updated: combo 10$, logs 25$',
        date: '2024-02-02T08:15:00.000Z',
        ...noMedia,
        links: null,
      });
      // A forward keeps its origin, the bot it came via, the message it replies to and its last edit.
      expect(m(9)).toMatchObject({
        text_preview: 'Forwarded: new stealer build available',
        date: '2024-02-02T09:40:00.000Z',
        ...noMedia,
        forwarded_from: 'Ghost Cloud Logs',
        forwarded_from_id: 'channel1650011223',
        via_bot: '@leakmirror_bot',
        reply_to_message_id: 8,
        edited_at: '2024-02-02T09:55:00.000Z',
      });
      expect(m(2)).toMatchObject({
        forwarded_from: null,
        forwarded_from_id: null,
        via_bot: null,
        reply_to_message_id: null,
        edited_at: null,
      });
      // A search for the origin channel's name finds what was forwarded from it.
      expect((await view.search('"ghost cloud logs"')).results.map((r) => [r.message_id, r.forwarded_from])).toEqual([
        [9, 'Ghost Cloud Logs'],
      ]);

      // The stored texts are searchable.
      const found = await view.search('combolist AND acme-bank.com');
      expect(found.results.map((r) => r.message_id)).toEqual([2]);
    },
    CLI_TEST_MS,
  );

  it(
    'a full-account export: every chat of chats.list, user ids from from_id, --category on each chat',
    async () => {
      const f = await fresh();
      const summary = await f.ingestJson(['--category', 'Carding', FULL], { env: NEW_YORK });
      expect(summary).toMatchObject({
        sources: 1,
        failed: 0,
        channels: 2,
        messages_added: 5,
        duplicates_skipped: 0,
        rejected: 0,
      });
      expect(summary.results).toEqual([
        {
          source: FULL,
          format: 'telegram',
          ok: true,
          channels: 2,
          added: 5,
          duplicates: 0,
          rejected: [],
          warnings: {},
        },
      ]);

      const view = await f.view();
      const channels = await view.channels();
      expect(channels.map((c) => [c.title, c.platform_id, c.category_name, c.total_messages_scraped])).toEqual([
        ['Carding Talk', '1543219876', 'Carding', 3],
        ['Ivan', '123', 'Carding', 2],
      ]);

      const messages = await view.messages();
      expect([...messages.keys()].sort()).toEqual([
        'Carding Talk#5',
        'Carding Talk#6',
        'Carding Talk#8',
        'Ivan#8',
        'Ivan#9',
      ]);
      expect(messages.get('Carding Talk#5')).toMatchObject({
        user_id: 123,
        text_preview: 'Anyone has fresh BINs for globex.com cards?',
        date: '2024-02-03T07:05:10.000Z',
        links: null,
      });
      // A mention is not a link; a text_link is.
      expect(messages.get('Carding Talk#6')).toMatchObject({
        user_id: 456,
        text_preview: 'Check @bins_shop_bot or our shop',
        links: ['https://bins.example.shop/'],
      });
      expect(messages.get('Carding Talk#8')).toMatchObject({
        user_id: 789,
        text_preview: 'Привет всем, продаю свежие логи банка',
      });
      // Message id 8 exists in both chats: unique per channel, not globally.
      expect(messages.get('Ivan#8')).toMatchObject({
        user_id: 123,
        text_preview: 'Check the new panel at login-globex.com, works for me',
      });
      expect(messages.get('Ivan#9')).toMatchObject({
        user_id: 555000111,
        text_preview: '',
        has_media: true,
        media_type: 'document',
        file_name: 'report.pdf',
        date: '2024-02-04T16:21:30.000Z',
      });

      // Cyrillic text is searchable, case-insensitively.
      const cyrillic = await view.search('ЛОГИ');
      expect(cyrillic.results.map((r) => [r.channel_id, r.message_id])).toEqual([[channels[0]!.id, 8]]);
    },
    CLI_TEST_MS,
  );

  it(
    'a collector JSON Lines file: several channels, categories, links, Cyrillic and Arabic; the same again on stdin adds nothing',
    async () => {
      const f = await fresh();
      const first = await f.ingestJson(['--category', 'Unsorted', COLLECTOR]);
      expect(first).toEqual({
        sources: 1,
        failed: 0,
        channels: 3,
        messages_added: 5,
        duplicates_skipped: 0,
        rejected: 0,
        warnings: [],
        results: [
          {
            source: COLLECTOR,
            format: 'jsonl',
            ok: true,
            channels: 3,
            added: 5,
            duplicates: 0,
            rejected: [],
            warnings: {},
          },
        ],
      });
      // Again, through standard input (-) and without --category: recognised as JSON Lines,
      // nothing added, and the category given before is kept.
      const second = await f.ingestJson(['-'], { input: fixtureText(COLLECTOR) });
      expect(second).toEqual({
        sources: 1,
        failed: 0,
        channels: 3,
        messages_added: 0,
        duplicates_skipped: 5,
        rejected: 0,
        warnings: [],
        results: [
          { source: '-', format: 'jsonl', ok: true, channels: 3, added: 0, duplicates: 5, rejected: [], warnings: {} },
        ],
      });

      const view = await f.view();
      const channels = await view.channels();
      expect(
        channels.map((c) => [c.title, c.username, c.platform_id, c.category_name, c.total_messages_scraped]),
      ).toEqual([
        ['Fresh Logs Hub', 'fresh_logs_hub', '1001786001', 'Stealer logs', 2],
        // The only channel whose records name no category gets --category.
        ['Combo Market', 'combo_market', null, 'Unsorted', 2],
        ['قناة التسريبات', null, '-1002233445566', 'Leaks', 1],
      ]);

      const messages = await view.messages();
      expect(messages.size).toBe(5);
      const hub501 = messages.get('Fresh Logs Hub#501')!;
      expect(hub501).toMatchObject({
        channel_username: 'fresh_logs_hub',
        user_id: null,
        date: '2024-03-01T10:00:00.000Z',
        has_media: true,
        media_type: 'document',
        file_name: 'pack501.zip',
      });
      // links[] of the record plus the link written in the text.
      expect(sortedLinks(hub501.links)).toEqual([
        'https://dl.example.io/pack501.zip',
        'https://mirror.example.io/pack501',
      ]);
      // Epoch seconds.
      expect(messages.get('Fresh Logs Hub#502')).toMatchObject({
        date: '2024-03-01T11:00:00.000Z',
        text_preview: 'Свежие логи: банк, почта, пароли. Цена 50$ за пак',
        links: null,
        has_media: false,
      });
      // An ISO date with an offset; a link in parentheses followed by a full stop.
      expect(messages.get('Combo Market#77')).toMatchObject({
        user_id: 4242,
        date: '2024-03-02T05:00:00.000Z',
        links: ['https://paste.example.com/raw/Ab12'],
      });
      expect(messages.get('Combo Market#78')).toMatchObject({ links: ['https://combo.example.shop/prices'] });
      expect(messages.get('قناة التسريبات#9')).toMatchObject({
        text_preview: 'تسريب قاعدة بيانات جديدة لشركة globex.com اليوم',
        has_media: true,
        media_type: 'photo',
        date: '2024-03-03T18:45:00.000Z',
      });

      expect((await view.search('логи')).results.map((r) => r.message_id)).toEqual([502]);
      expect((await view.search('تسريب')).results.map((r) => r.message_id)).toEqual([9]);
    },
    CLI_TEST_MS,
  );

  it(
    'standard input (-): a Telegram export is recognised as one',
    async () => {
      const f = await fresh();
      const telegram = await f.ingestJson(['-'], { input: fixtureText(CHANNEL) });
      expect(telegram.results).toEqual([
        { source: '-', format: 'telegram', ok: true, channels: 1, added: 8, duplicates: 0, rejected: [], warnings: {} },
      ]);

      const view = await f.view();
      expect((await view.channels()).map((c) => [c.title, c.platform_id])).toEqual([
        ['Dark Leaks Market', '1786543210'],
      ]);
      const messages = await view.messages();
      expect(messages.size).toBe(8);
      expect(messages.get('Dark Leaks Market#3')).toMatchObject({
        media_type: 'photo',
        links: ['https://mega.example.org/folder/Xk29'],
      });
    },
    CLI_TEST_MS,
  );

  it(
    'dates that cannot be right: a message dated in the future is rejected, an edit in the future is not stored and is counted',
    async () => {
      const f = await fresh();
      const future = String(Math.floor(Date.now() / 1000) + 30 * 86_400);
      const message = (id: number, extra: Record<string, unknown>) => ({
        id,
        type: 'message',
        date_unixtime: '1706866800',
        from: 'Ops',
        from_id: 'user7',
        text: `note ${id}`,
        ...extra,
      });
      const exported = JSON.stringify({
        name: 'Clock Drift',
        type: 'public_channel',
        id: 4242,
        messages: [
          message(1, {}),
          message(2, { edited_unixtime: future }),
          message(3, { date_unixtime: future }),
          message(4, { date_unixtime: undefined, date: '1970-01-01T00:00:05' }),
        ],
      });
      const summary = await f.ingestJson(['-'], { input: exported });
      expect(summary).toMatchObject({
        messages_added: 2,
        rejected: 2,
        warnings: [{ reason: 'edited date in the future', count: 1, examples: ['- $.messages[1]'] }],
      });
      expect(summary.results[0]!.rejected).toEqual([
        { location: '$.messages[2]', reason: 'message date in the future' },
        { location: '$.messages[3]', reason: 'message date before 1990' },
      ]);
      const messages = await (await f.view()).messages();
      expect(messages.get('Clock Drift#2')).toMatchObject({ edited_at: null, date: '2024-02-02T09:40:00.000Z' });

      const text = await f.cli(['ingest', 'messenger', '-'], { input: exported });
      expect(lines(text.stdout)).toContain(
        '  warning: edited date in the future: 1 (stored as null; e.g. - $.messages[1])',
      );
    },
    CLI_TEST_MS,
  );

  it(
    'malformed JSON exports: exit code 1, the error names file, line and column, nothing of them is stored; a good file in the same run is',
    async () => {
      const f = await fresh();
      const missingComma = f.tempFile(
        'missing_comma.json',
        [
          '{',
          ' "name": "Comma Drop",',
          ' "type": "public_channel",',
          ' "id": 1600000001,',
          ' "messages": [',
          '  {"id": 1, "type": "message", "date_unixtime": "1709290800", "text": "comma drop first"}',
          '  {"id": 2, "type": "message", "date_unixtime": "1709290860", "text": "comma drop second"}',
          ' ]',
          '}',
          '',
        ].join('\n'),
      );
      const summary = await f.ingestJson([TRUNCATED, missingComma, CHANNEL], { code: 1 });
      expect(summary).toMatchObject({ sources: 3, failed: 2, channels: 1, messages_added: 8, duplicates_skipped: 0 });
      const [truncated, comma, good] = summary.results;

      expect(truncated).toMatchObject({ source: TRUNCATED, ok: false, channels: 0, added: 0 });
      // Cut off inside the text of the second message, on the file's last line (28).
      expect(truncated!.error).toMatch(new RegExp(`^${TRUNCATED}: line 28, column \\d+: malformed JSON$`));
      expect(comma).toMatchObject({ source: missingComma, ok: false, added: 0 });
      // The second message object starts where a comma was expected.
      expect(comma!.error).toBe(`${missingComma}: line 7, column 3: malformed JSON`);
      expect(good).toMatchObject({ source: CHANNEL, ok: true, added: 8 });

      const view = await f.view();
      expect((await view.channels()).map((c) => c.title)).toEqual(['Dark Leaks Market']);
      expect((await view.search('initech')).total).toBe(0);
      expect((await view.search('"comma drop"')).total).toBe(0);
      expect((await view.messages()).size).toBe(8);
    },
    CLI_TEST_MS,
  );

  it(
    'a truncated Telegram export on standard input: the error points at where it breaks off, not at line 1',
    async () => {
      const f = await fresh();
      const summary = await f.ingestJson(['-'], { input: fixtureText(TRUNCATED), code: 1 });
      expect(summary).toMatchObject({ sources: 1, failed: 1, messages_added: 0 });
      // Read as JSON Lines, the pretty-printed export fails on its first line ("{"), which says
      // nothing about the real problem at the end of the document.
      expect(summary.results[0]).toMatchObject({ source: '-', ok: false });
      expect(summary.results[0]!.error).toMatch(/^stdin: line 28, column \d+: malformed JSON$/);
    },
    CLI_TEST_MS,
  );

  it(
    'a JSON Lines file with a broken line in the middle is rolled back whole; the error names the line',
    async () => {
      const f = await fresh();
      const result = await f.cli(['ingest', 'messenger', BROKEN]);
      expect(result.code).toBe(1);
      const out = lines(result.stdout);
      expect(out[0]).toBe('1 sources (1 failed): 0 channels, 0 messages added, 0 duplicates skipped, 0 rejected');
      expect(out[1]).toMatch(new RegExp(`^  error: ${BROKEN}: line 3, column \\d+: malformed JSON$`));
      expect(lines(result.stderr)).toEqual([
        expect.stringMatching(new RegExp(`^${BROKEN}: FAILED, nothing stored: .*line 3\\b`)),
      ]);

      // Lines 1 and 2 were read and written before line 3 failed: none of it, not even the channel, stays.
      const view = await f.view();
      expect(await view.channels()).toEqual([]);
      expect((await view.messages()).size).toBe(0);
      expect((await view.search('nightdrop')).total).toBe(0);
    },
    CLI_TEST_MS,
  );

  it(
    'rejected records are listed with their location and reason while the rest is stored',
    async () => {
      const f = await fresh();
      const telegram = f.tempFile(
        'rejects.json',
        JSON.stringify({
          name: 'Reject Sample',
          type: 'public_channel',
          id: 1700000001,
          messages: [
            {
              id: 1,
              type: 'message',
              date_unixtime: '1709290800',
              from_id: 'channel1700000001',
              text: 'kept one, see https://x.example/a.',
            },
            { type: 'message', date_unixtime: '1709290860', text: 'no id' },
            { id: 3, type: 'message', text: 'no date' },
            { id: 4, type: 'message', date: 'yesterday', text: 'unreadable date' },
            { id: 5, type: 'message', date_unixtime: '1709290900', text: '', text_entities: [] },
            'not a message',
            { id: '7', type: 'message', date_unixtime: '1709291000', text: 'string id' },
            { id: 8, type: 'message', date_unixtime: '1709291100', text: ['kept ', { type: 'bold', text: 'two' }] },
            { id: 9, type: 'service', date_unixtime: '1709291200', action: 'pin_message', text: '' },
          ],
        }),
      );
      const channel = { title: 'Reject Lines' };
      const jsonl = f.tempFile(
        'rejects.jsonl',
        [
          { channel, message_id: 1, date: 1709290800, text: 'kept line one (https://y.example/b)' },
          { channel, date: 1709290800, text: 'no message id' },
          { channel, message_id: 3, text: 'no date' },
          [1, 2],
          { message_id: 5, date: 1709290800, text: 'no channel' },
          '',
          { channel, message_id: 7, date: 1709290800, text: 'user id as text', user_id: 'u7' },
          { channel, message_id: 8, date: 'not a date', text: 'bad date' },
          { channel, message_id: 9, date: 1709290800, text: '   ' },
          { channel, message_id: 10, date: 1709290800, text: 'kept line ten', links: ['https://z.example/c'] },
        ]
          .map((record) => (record === '' ? '' : JSON.stringify(record)))
          .join('\n'),
      );

      const summary = await f.ingestJson([telegram, jsonl]);
      expect(summary).toMatchObject({
        sources: 2,
        failed: 0,
        channels: 2,
        messages_added: 4,
        duplicates_skipped: 0,
        rejected: 13,
      });
      expect(summary.results[0]).toMatchObject({ source: telegram, ok: true, added: 2 });
      expect(summary.results[0]!.rejected).toEqual([
        { location: '$.messages[1]', reason: expect.stringMatching(/\bid\b/) },
        { location: '$.messages[2]', reason: expect.stringMatching(/date/) },
        { location: '$.messages[3]', reason: expect.stringMatching(/date/) },
        { location: '$.messages[4]', reason: expect.stringMatching(/neither text nor media/) },
        { location: '$.messages[5]', reason: expect.stringMatching(/object/) },
        { location: '$.messages[6]', reason: expect.stringMatching(/\bid\b/) },
      ]);
      expect(summary.results[1]).toMatchObject({ source: jsonl, ok: true, added: 2 });
      expect(summary.results[1]!.rejected).toEqual([
        { location: 'line 2', reason: expect.stringMatching(/message_id/) },
        { location: 'line 3', reason: expect.stringMatching(/date/) },
        { location: 'line 4', reason: expect.stringMatching(/object/) },
        { location: 'line 5', reason: expect.stringMatching(/channel/) },
        { location: 'line 7', reason: expect.stringMatching(/user_id/) },
        { location: 'line 8', reason: expect.stringMatching(/date/) },
        { location: 'line 9', reason: expect.stringMatching(/neither text nor media/) },
      ]);

      // The human-readable summary lists them too (and a second run still finds them).
      const again = await f.cli(['ingest', 'messenger', telegram, jsonl]);
      expect(again.code, again.stderr).toBe(0);
      const out = lines(again.stdout);
      expect(out[0]).toBe('2 sources (0 failed): 2 channels, 0 messages added, 4 duplicates skipped, 13 rejected');
      expect(out).toContain(`  rejected ${telegram} $.messages[2]: ${summary.results[0]!.rejected[1]!.reason}`);
      expect(out).toContain(`  rejected ${jsonl} line 7: ${summary.results[1]!.rejected[4]!.reason}`);
      expect(lines(again.stderr)).toEqual([
        `${telegram}: 1 channels, 0 messages added, 2 duplicates skipped, 6 rejected`,
        `${jsonl}: 1 channels, 0 messages added, 2 duplicates skipped, 7 rejected`,
      ]);

      const view = await f.view();
      const messages = await view.messages();
      expect([...messages.keys()].sort()).toEqual([
        'Reject Lines#1',
        'Reject Lines#10',
        'Reject Sample#1',
        'Reject Sample#8',
      ]);
      // Links found in the text of a Telegram message and of a JSON Lines record.
      expect(messages.get('Reject Sample#1')).toMatchObject({
        links: ['https://x.example/a'],
        user_id: null,
        date: '2024-03-01T11:00:00.000Z',
      });
      expect(messages.get('Reject Sample#8')).toMatchObject({ text_preview: 'kept two', links: null });
      expect(messages.get('Reject Lines#1')).toMatchObject({ links: ['https://y.example/b'] });
      expect(messages.get('Reject Lines#10')).toMatchObject({ links: ['https://z.example/c'] });
    },
    CLI_TEST_MS,
  );

  it(
    'a folder argument ingests every .json/.jsonl file in it, in name order; the broken ones fail alone',
    async () => {
      const f = await fresh();
      const summary = await f.ingestJson([FIXTURES], { code: 1 });
      expect(summary).toMatchObject({
        sources: 5,
        failed: 2,
        channels: 6,
        messages_added: 18,
        duplicates_skipped: 0,
        rejected: 0,
      });
      // README.md is not a source.
      expect(summary.results.map((r) => [path.basename(r.source), r.format, r.ok, r.added])).toEqual([
        ['broken_line.jsonl', 'jsonl', false, 0],
        ['channel_export.json', 'telegram', true, 8],
        ['collector.jsonl', 'jsonl', true, 5],
        ['full_account_export.json', 'telegram', true, 5],
        ['truncated_export.json', 'telegram', false, 0],
      ]);

      const view = await f.view();
      expect((await view.channels()).map((c) => c.title).sort()).toEqual(
        ['Carding Talk', 'Combo Market', 'Dark Leaks Market', 'Fresh Logs Hub', 'Ivan', 'قناة التسريبات'].sort(),
      );
      expect((await view.messages()).size).toBe(18);
    },
    CLI_TEST_MS,
  );

  it(
    'a path that does not exist: exit code 1 and an error naming it',
    async () => {
      const f = await fresh();
      const result = await f.cli(['ingest', 'messenger', `${FIXTURES}/no_such_export.json`]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`${FIXTURES}/no_such_export.json`);
      expect(result.stderr).toMatch(/no such file/);
    },
    CLI_TEST_MS,
  );

  it(
    'JSON Lines dates without a zone are read as UTC, whatever the zone of the machine',
    async () => {
      const f = await fresh();
      const record = {
        channel: { username: 'tz_probe', title: 'TZ Probe' },
        message_id: 1,
        date: '2024-03-04T12:00:00',
        text: 'zone-less date',
      };
      const summary = await f.ingestJson(['-'], { input: `${JSON.stringify(record)}\n`, env: NEW_YORK });
      expect(summary).toMatchObject({ messages_added: 1, rejected: 0 });
      const messages = await (await f.view()).messages();
      // As the Telegram reader does for `date`. Read in the machine's zone this was 17:00Z.
      expect(messages.get('TZ Probe#1')?.date).toBe('2024-03-04T12:00:00.000Z');
    },
    CLI_TEST_MS,
  );

  it(
    'dragnet demo prints credentials that log in and loads a searchable demo corpus',
    async () => {
      const f = await fresh();
      const result = await f.cli(['demo']);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/^Email: +demo@dragnet\.local$/m);
      const password = /^Password: +(\S+)$/m.exec(result.stdout)?.[1];
      expect(password).toBeDefined();
      const added = Number(/^Demo corpus: (\d+) messages added/m.exec(result.stdout)?.[1]);
      expect(added).toBeGreaterThan(0);

      const view = await f.view();
      const login = await view.t.request({
        method: 'POST',
        url: '/token/',
        body: { email: 'demo@dragnet.local', password },
      });
      expect(login.statusCode, login.body).toBe(200);
      const { access } = login.json() as { access: string };

      expect((await view.channels()).length).toBeGreaterThan(1);
      for (const query of ['password', '"fresh logs" AND acme-bank.com']) {
        const response = await view.t.request({
          method: 'POST',
          url: '/service/messenger-search-create/',
          token: access,
          body: { query },
        });
        expect(response.statusCode, response.body).toBe(200);
        const body = response.json() as { total: number; results: { text_preview: string }[] };
        expect(body.total, query).toBeGreaterThan(0);
        expect(body.total).toBeLessThanOrEqual(added);
        expect(body.results[0]!.text_preview.toLowerCase()).toContain(
          query === 'password' ? 'password' : 'acme-bank.com',
        );
      }
    },
    CLI_TEST_MS,
  );
});
