import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { IngestError } from '../common/ingest/ingest-kit.ts';
import { exportRecords } from './discord-export.ts';

const records = (data: unknown) => [...exportRecords(data, 'test.json')];

const exportOf = (
  messages: unknown[],
  guild: Record<string, unknown> = { id: '1120734651482091580', name: 'Combo Market' },
) => ({
  guild,
  channel: {
    id: '1120736194526576712',
    type: 'GuildTextChat',
    categoryId: '1120736194526575712',
    category: 'Market',
    name: 'combolists',
    topic: null,
  },
  dateRange: { after: null, before: null },
  messages,
  messageCount: messages.length,
});

const message = (overrides: Record<string, unknown> = {}) => ({
  id: '1130000000000000001',
  type: 'Default',
  timestamp: '2026-03-10T08:15:00.123+00:00',
  content: 'fresh acme-bank.com combo',
  author: { id: '731249608851456031', name: 'gh0st_dealer', discriminator: '0000', nickname: 'ghost', isBot: false },
  attachments: [],
  embeds: [],
  ...overrides,
});

describe('DiscordChatExporter exports', () => {
  it('a message becomes a document: content, embed titles and descriptions, attachment names are searched', () => {
    const [first] = records(
      exportOf([
        message({
          content: 'new drop',
          attachments: [
            {
              id: '1',
              url: 'https://cdn.discordapp.com/attachments/1/2/acme_combo.txt',
              fileName: 'acme_combo.txt',
              fileSizeBytes: 10,
            },
          ],
          embeds: [{ title: 'acme-bank.com logs', description: 'Cloud updated', fields: [] }],
        }),
      ]),
    );
    expect(first).toEqual({
      location: 'messages[0]',
      record: {
        key: '1120736194526576712:1130000000000000001',
        text: 'new drop\nacme-bank.com logs\nCloud updated\nacme_combo.txt',
        fields: {
          message_id: '1130000000000000001',
          server_id: '1120734651482091580',
          server_name: 'Combo Market',
          channel_id: '1120736194526576712',
          channel_name: 'combolists',
          category: 'Market',
          author_id: '731249608851456031',
          author_name: 'ghost',
          is_bot: false,
          timestamp: '2026-03-10T08:15:00.123Z',
          has_attachments: true,
          attachments: ['acme_combo.txt'],
          url: 'https://discord.com/channels/1120734651482091580/1120736194526576712/1130000000000000001',
        },
      },
    });
  });

  it('rejects a bad message with its index and reason, skips system notices and messages with nothing to search', () => {
    const found = records(
      exportOf([
        message({ id: 1130000000000001 }),
        message({ type: 'GuildMemberJoin', content: 'Joined the server.' }),
        message({ timestamp: 'yesterday' }),
        message({ author: { name: 'nobody' } }),
        message({ content: '', stickers: [{ id: '1', name: 'Laugh' }] }),
        message({ content: 42 }),
        'not a message',
        message({ id: '1130000000000000009', author: { id: '1121005948317286460', name: 'LogsFeed', isBot: true } }),
      ]),
    );
    expect(
      found.map(({ location, record }) => [location, typeof record === 'string' ? record : record.fields.author_name]),
    ).toEqual([
      ['messages[0]', 'id must be a snowflake id (a string of digits)'],
      ['messages[2]', 'timestamp must be an ISO 8601 date'],
      ['messages[3]', 'author.id must be a snowflake id (a string of digits)'],
      ['messages[5]', 'content must be a string'],
      ['messages[6]', 'not a JSON object'],
      ['messages[7]', 'LogsFeed'],
    ]);
    expect(found[5]!.record).toMatchObject({ fields: { is_bot: true } });
  });

  it('an input that is no export fails as a whole, naming what is missing', () => {
    const failure = (data: unknown) => {
      try {
        records(data);
      } catch (error) {
        expect(error).toBeInstanceOf(IngestError);
        return (error as IngestError).message;
      }
      return 'no error';
    };
    expect(failure([])).toBe('test.json: top level: not a DiscordChatExporter JSON export: not a JSON object');
    expect(failure({ ...exportOf([]), guild: { id: 2536015243982930 } })).toBe(
      'test.json: guild: not a DiscordChatExporter JSON export: no guild with a snowflake id',
    );
    expect(failure({ ...exportOf([]), messages: {} })).toBe(
      'test.json: messages: not a DiscordChatExporter JSON export: no messages array',
    );
  });

  it('direct messages (guild 0) link under @me', () => {
    const [dm] = records(exportOf([message()], { id: '0', name: 'Direct Messages' }));
    expect(dm!.record).toMatchObject({
      fields: { server_id: '0', url: 'https://discord.com/channels/@me/1120736194526576712/1130000000000000001' },
    });
  });
});

type Fields = Record<string, unknown>;

/** An export folder and what its two files must read as: a server channel and a group DM. */
interface ExportSet {
  name: string;
  folder: string;
  server: {
    file: string;
    locations: string[];
    /** Two messages with one id: both are read, and the store keeps one. */
    duplicated: [number, number];
    /** Its author has no `nickname`, so the name is shown. */
    withoutNickname: { index: number; fields: Fields };
    withAttachment: { index: number; text: string; attachments: string[] };
    first: Fields;
  };
  group: { file: string; authors: [string, string][]; first: Fields };
}

// Our own exports (made-up people and servers) always; the real ones of a public repository
// (../shared/fixtures/SOURCES.md) as well where that folder is, read in place and never copied.
const sharedFolder = path.resolve(import.meta.dirname, '../../../../..', 'shared', 'fixtures', 'discord');
const exportSets: ExportSet[] = [
  {
    name: 'test/fixtures/chat_server/discord',
    folder: path.resolve(import.meta.dirname, '../../../../test/fixtures/chat_server/discord'),
    server: {
      file: 'quartz-exchange-dumps.json',
      locations: ['messages[0]', 'messages[1]', 'messages[2]', 'messages[3]', 'messages[4]'],
      duplicated: [0, 1],
      withoutNickname: {
        index: 2,
        fields: {
          message_id: '1187654400000000002',
          author_name: 'bytebarn',
          server_name: 'Quartz Exchange',
          channel_name: 'dumps',
          category: 'Trading',
        },
      },
      withAttachment: { index: 3, text: 'sample attached\ninitech_sample.txt', attachments: ['initech_sample.txt'] },
      first: {
        server_id: '1187654321098765432',
        channel_id: '1187654399887766550',
        author_name: 'kr4ken',
        timestamp: '2025-11-02T14:05:10.482Z',
        url: 'https://discord.com/channels/1187654321098765432/1187654399887766550/1187654400000000001',
      },
    },
    group: {
      file: 'quiet-room-group.json',
      authors: [
        ['messages[1]', 'lumen'],
        ['messages[3]', 'Corvid'],
      ],
      first: {
        server_id: '0',
        server_name: 'Direct Messages',
        category: 'Group',
        url: 'https://discord.com/channels/@me/1187700000000000500/1187700000000000602',
      },
    },
  },
  ...(existsSync(sharedFolder)
    ? [
        {
          name: '../shared/fixtures/discord',
          folder: sharedFolder,
          server: {
            file: 'SV_5A_5M.json',
            locations: ['messages[0]', 'messages[1]', 'messages[2]', 'messages[3]', 'messages[4]'],
            duplicated: [0, 1] as [number, number],
            withoutNickname: {
              index: 2,
              fields: {
                message_id: '447793085255123004',
                author_name: 'mlomb',
                server_name: 'DefleMask',
                channel_name: 'general-chiptune',
                category: 'Chat',
              },
            },
            withAttachment: {
              index: 3,
              text: 'This message has attachments and stickers.\nunknown.png',
              attachments: ['unknown.png'],
            },
            first: {
              server_id: '253601524398293010',
              channel_id: '253601524398293010',
              timestamp: '2018-05-20T16:09:44.209Z',
              url: 'https://discord.com/channels/253601524398293010/253601524398293010/459136077417021488',
            },
          },
          group: {
            file: 'GC_3A_5M.json',
            authors: [
              ['messages[1]', 'theplant'],
              ['messages[3]', 'lombi'],
              ['messages[4]', 'mlomb'],
            ] as [string, string][],
            first: {
              server_id: '0',
              server_name: 'Direct Messages',
              category: 'Group',
              url: 'https://discord.com/channels/@me/1064990764406419508/1064990824305274930',
            },
          },
        },
      ]
    : []),
];

describe.each(exportSets)('DiscordChatExporter exports in $name', ({ folder, server, group }) => {
  const read = (name: string) => records(JSON.parse(readFileSync(path.join(folder, name), 'utf8')));

  it('a server channel: the duplicated message id is read twice (the store keeps one), a missing nickname falls back to the name', () => {
    const found = read(server.file);
    expect(found.map((entry) => entry.location)).toEqual(server.locations);
    const documents = found.map((entry) => entry.record as Exclude<typeof entry.record, string>);
    const [one, other] = server.duplicated;
    expect(documents[one]!.key).toBe(documents[other]!.key);
    expect(documents[server.withoutNickname.index]!.fields).toMatchObject(server.withoutNickname.fields);
    expect(documents[server.withAttachment.index]).toMatchObject({
      text: server.withAttachment.text,
      fields: { has_attachments: true, attachments: server.withAttachment.attachments },
    });
    expect(documents[0]!.fields).toMatchObject(server.first);
  });

  it('a group DM: renames and calls are system notices and skipped; links go under @me', () => {
    const found = read(group.file);
    expect(
      found.map(({ location, record }) => [location, typeof record === 'string' ? record : record.fields.author_name]),
    ).toEqual(group.authors);
    expect(found[0]!.record).toMatchObject({ fields: group.first });
  });
});
