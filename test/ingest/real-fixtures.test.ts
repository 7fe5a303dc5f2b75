import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findIngester } from '../../src/modules/sources/index.ts';
import type { SourceResult } from '../../src/modules/sources/messenger/ingest/ingest.service.ts';
import { repoRoot } from '../support/cli.ts';
import { createTestStoreLocation, type TestStoreLocation } from '../support/test-store.ts';
import { openStoreView, type MessageItem, type StoreView } from './messenger-store.ts';

/** `dragnet ingest messenger` without the child process: the same ingester, on the view's store. */
async function ingestMessenger(view: StoreView, inputs: string[]): Promise<SourceResult[]> {
  const report = await findIngester('messenger')!.run(view.t.container.sourceContext, inputs, { format: 'auto' });
  return report.summary.results as SourceResult[];
}

/**
 * Real Telegram Desktop exports from public repositories (../shared/fixtures/SOURCES.md). They
 * are read where they are and never copied into this repository. The expected values were read
 * off the files by hand.
 */
const dir = path.resolve(repoRoot, '..', 'shared', 'fixtures', 'telegram');
const file = (name: string) => path.join(dir, name);

// Nothing is skipped in a plain checkout: without the folder each step has nothing to check (the
// same shapes are tested on this repository's own fixtures in ingest-cli.test.ts).
const present = existsSync(dir);

describe('real Telegram Desktop exports (../shared/fixtures/telegram), where present', () => {
  let location: TestStoreLocation;
  let view: StoreView;
  let messages: Map<string, MessageItem & { channel_title: string }>;
  const savedTz = process.env.TZ;

  beforeAll(async () => {
    if (!present) return;
    // Far from UTC, so that a `date` without a zone read as local time would show.
    process.env.TZ = 'Pacific/Kiritimati';
    location = await createTestStoreLocation();
    view = await openStoreView(location);
  });
  afterAll(async () => {
    if (savedTz === undefined) delete process.env.TZ;
    else process.env.TZ = savedTz;
    await view?.close();
    await location?.drop();
  });

  it('the folder: every export is read, service messages are skipped, nothing is rejected', async () => {
    if (!present) return;
    const results = await ingestMessenger(view, [dir]);
    expect(results).toEqual([
      // 8 entries, of which 2 are service messages (joined_telegram, phone_call).
      {
        source: file('DM_2A_7M.json'),
        format: 'telegram',
        ok: true,
        channels: 1,
        added: 6,
        duplicates: 0,
        rejected: [],
        warnings: {},
      },
      // 2 chats: 2 messages, and 4 entries of which 1 is a service message (phone_call).
      {
        source: file('MultiChat_2C_6M.json'),
        format: 'telegram',
        ok: true,
        channels: 2,
        added: 5,
        duplicates: 0,
        rejected: [],
        warnings: {},
      },
      // No chat id, and a message without type or from: still read.
      {
        source: file('telegram_export.json'),
        format: 'telegram',
        ok: true,
        channels: 1,
        added: 1,
        duplicates: 0,
        rejected: [],
        warnings: {},
      },
    ]);
    messages = await view.messages();
    expect([...messages.keys()].sort()).toEqual(
      [
        'Bob#3644',
        'Bob#3645',
        'Bob#3662',
        'Bob#3663',
        'Bob#3672',
        'Bob#3673',
        'Chat One#1001',
        'Chat One#1002',
        'Chat Two#2001',
        'Chat Two#2002',
        'Chat Two#2004',
        'Fixture Channel#10',
      ].sort(),
    );
  });

  it('channels: one per chat, identified by the chat id where there is one', async () => {
    if (!present) return;
    const channels = await view.channels();
    expect(
      channels.map((c) => [c.platform, c.title, c.platform_id, c.username, c.category_id, c.total_messages_scraped]),
    ).toEqual([
      ['telegram', 'Bob', '700000000', null, null, 6],
      ['telegram', 'Chat One', '700000001', null, null, 2],
      ['telegram', 'Chat Two', '700000002', null, null, 3],
      ['telegram', 'Fixture Channel', null, null, null, 1],
    ]);
    // The test app's clock.
    expect(new Set(channels.map((c) => c.last_scraped_at))).toEqual(new Set(['2026-03-10T09:00:00.000Z']));
  });

  it('DM_2A_7M.json: link entity, user ids, date or date_unixtime, captionless photos', () => {
    if (!present) return;
    const bob = (id: number) => messages.get(`Bob#${id}`);
    const plain = { has_media: false, media_type: null, file_name: null };
    expect(bob(3644)).toMatchObject({
      text_preview: 'https://google.com 👀',
      links: ['https://google.com'],
      user_id: 700000000,
      // Only `date` (no zone): read as UTC.
      date: '2019-07-12T16:55:32.000Z',
      ...plain,
    });
    expect(bob(3645)).toMatchObject({
      text_preview: 'hello world',
      links: null,
      user_id: 300000000,
      date: '2022-03-08T13:07:42.000Z',
      ...plain,
    });
    // Only `date_unixtime`.
    expect(bob(3662)).toMatchObject({
      text_preview: 'world?',
      user_id: 700000000,
      date: '2022-05-09T22:23:53.000Z',
      ...plain,
    });
    expect(bob(3663)).toMatchObject({
      text_preview: 'blah blah',
      user_id: 300000000,
      date: '2022-05-09T23:26:09.000Z',
      ...plain,
    });
    // "photo": "(File not included. …)": a photo without a file name, and no caption.
    for (const [id, date] of [
      [3672, '2022-06-10T22:06:38.000Z'],
      [3673, '2022-06-10T22:06:39.000Z'],
    ] as const) {
      expect(bob(id)).toMatchObject({
        text_preview: '',
        links: null,
        user_id: 300000000,
        date,
        has_media: true,
        media_type: 'photo',
        file_name: null,
      });
    }
  });

  it('MultiChat_2C_6M.json: both chats of a full-account export; date_unixtime wins over date', () => {
    if (!present) return;
    expect(messages.get('Chat One#1001')).toMatchObject({
      text_preview: 'Hello from chat one!',
      user_id: 300000000,
      date: '2023-01-01T12:00:00.000Z',
    });
    expect(messages.get('Chat One#1002')).toMatchObject({
      text_preview: 'Hi there!',
      user_id: 700000000,
      date: '2023-01-01T12:01:00.000Z',
    });
    expect(messages.get('Chat Two#2001')).toMatchObject({
      text_preview: 'Welcome to chat two!',
      user_id: 800000000,
      date: '2023-01-02T12:00:00.000Z',
    });
    expect(messages.get('Chat Two#2002')).toMatchObject({
      text_preview: 'Group chat is fun!',
      user_id: 900000000,
      date: '2023-01-02T12:02:00.000Z',
    });
    expect(messages.get('Chat Two#2004')).toMatchObject({
      text_preview: '',
      user_id: 101000000,
      date: '2023-01-03T12:00:00.000Z',
      has_media: true,
      media_type: 'photo',
      links: null,
    });
  });

  it('telegram_export.json: lenient (no chat id, no type, no from); links are those of the link and text_link entities', () => {
    if (!present) return;
    const message = messages.get('Fixture Channel#10')!;
    expect(message).toMatchObject({
      // The parts of `text` joined as they are: the text_link's text follows the link directly.
      text_preview: 'Read: https://example.com/article?utm_source=telegramhidden',
      user_id: null,
      date: '2026-07-15T10:00:00.000Z',
      has_media: false,
      media_type: null,
      file_name: null,
    });
    // Telegram marked the URL as a link entity. The text run on after it ("…telegramhidden")
    // is not a link that exists.
    expect([...(message.links ?? [])].sort()).toEqual([
      'https://example.com/article?utm_source=telegram',
      'https://other.example/news',
    ]);
  });

  it('searching the real texts finds them', async () => {
    if (!present) return;
    expect((await view.search('"hello world"')).results.map((r) => r.message_id)).toEqual([3645]);
    expect((await view.search('chat')).results.map((r) => r.message_id).sort()).toEqual([1001, 2001, 2002]);
    expect((await view.search('👀')).results.map((r) => r.message_id)).toEqual([3644]);
  });

  it('re-ingesting the folder adds nothing', async () => {
    if (!present) return;
    const results = await ingestMessenger(view, [dir]);
    expect(results.map((r) => [path.basename(r.source), r.ok, r.added, r.duplicates])).toEqual([
      ['DM_2A_7M.json', true, 0, 6],
      ['MultiChat_2C_6M.json', true, 0, 5],
      ['telegram_export.json', true, 0, 1],
    ]);
    expect((await view.messages()).size).toBe(12);
    expect((await view.channels()).length).toBe(4);
  });
});
