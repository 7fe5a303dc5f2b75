import { demoPostedAt, demoRandom, writeDemoDocuments } from '../common/documents/demo-documents.ts';
import type { DocumentInput } from '../common/documents/document-store.ts';
import type { SourceContext } from '../kit/source.ts';
import { exportRecords } from './discord-export.ts';
import { isoDateWithOffset as isoOffset } from '../../../lib/iso-date.ts';

/**
 * Synthetic DiscordChatExporter exports: the demo data of `dragnet demo` and the benchmark input
 * of `npm run bench -- sources`. Servers, people and messages are made up; ids look like
 * snowflakes. The demo goes through the real export parser, as an ingested file would.
 */

export interface DemoChannel {
  id: string;
  name: string;
  category: string;
}

export interface DemoServer {
  id: string;
  name: string;
  channels: DemoChannel[];
}

/** The catalog's example server and channel (chat_server.source.ts) are the demo's first. */
export const DEMO_SERVERS: DemoServer[] = [
  {
    id: '1120734651482091580',
    name: 'Combo Market',
    channels: [
      { id: '1120736194526576712', name: 'combolists', category: 'Market' },
      { id: '1120736521174778017', name: 'logs-shop', category: 'Market' },
      { id: '1120737012387823676', name: 'general', category: 'Community' },
    ],
  },
  {
    id: '1098241953046089798',
    name: 'Dark Cloud Logs',
    channels: [
      { id: '1098242450230509619', name: 'free-logs', category: 'Cloud' },
      { id: '1098242687120650340', name: 'announcements', category: 'Info' },
    ],
  },
];

const PEOPLE = [
  { id: '731249608851456031', name: 'gh0st_dealer', nickname: 'ghost' },
  { id: '884019237501628477', name: 'n1ghtcrawler', nickname: null },
  { id: '902315577164435496', name: 'combo.king', nickname: 'ComboKing' },
  { id: '695104382267768892', name: 'silentdrop', nickname: null },
  { id: '1011927350147391558', name: 'rootkit_rita', nickname: 'rita' },
] as const;
const BOT = { id: '1121005948317286460', name: 'LogsFeed', nickname: null };

const DOMAINS = [
  'acme-bank.com',
  'globex.com',
  'initech.io',
  'contoso.com',
  'northwind.co',
  'umbrella-corp.org',
  'fabrikam.ru',
];
const TEMPLATES: ((domain: string, lines: number) => string)[] = [
  (domain, lines) => `fresh ${domain} combo ${lines}k lines mail:pass, checked today`,
  (domain) => `selling logs with ${domain} cookies and saved passwords, escrow only`,
  (domain) => `anyone got a working checker for ${domain}? paying well`,
  (domain, lines) => `${domain} accounts with balance, ${lines} pcs, dm me`,
  (domain) => `new private combo: ${domain} + mail access, link in #combolists`,
  () => 'gm everyone, market is slow today',
  () => 'vouch for ghost, fast delivery',
  () => 'who has a good socks provider? old one is dead',
  (domain) => `stealer logs ${domain} cloud updated, 2k fresh`,
];

export interface DemoMessage {
  author: { id: string; name: string; nickname: string | null };
  isBot?: boolean;
  content: string;
  postedAt: number;
  attachment?: string;
  embed?: { title: string; description: string };
}

/** Messages in the exporter's own shape; ids count up from `firstId`. */
export function discordExport(server: DemoServer, channel: DemoChannel, messages: DemoMessage[], firstId: bigint) {
  return {
    guild: {
      id: server.id,
      name: server.name,
      iconUrl: `https://cdn.discordapp.com/icons/${server.id}/a1b2c3d4e5f60718293a4b5c6d7e8f90.png`,
    },
    channel: {
      id: channel.id,
      type: 'GuildTextChat',
      categoryId: String(BigInt(channel.id) - 1000n),
      category: channel.category,
      name: channel.name,
      topic: null,
    },
    dateRange: { after: null, before: null },
    messages: messages.map((message, i) => {
      const id = String(firstId + BigInt(i));
      return {
        id,
        type: 'Default',
        timestamp: isoOffset(message.postedAt),
        timestampEdited: null,
        callEndedTimestamp: null,
        isPinned: false,
        content: message.content,
        author: {
          id: message.author.id,
          name: message.author.name,
          discriminator: '0000',
          ...(message.author.nickname ? { nickname: message.author.nickname } : {}),
          color: null,
          isBot: message.isBot ?? false,
          avatarUrl: 'https://cdn.discordapp.com/embed/avatars/0.png',
        },
        attachments: message.attachment
          ? [
              {
                id: String(firstId + 500_000n + BigInt(i)),
                url: `https://cdn.discordapp.com/attachments/${channel.id}/${id}/${message.attachment}`,
                fileName: message.attachment,
                fileSizeBytes: 48_213,
              },
            ]
          : [],
        embeds: message.embed
          ? [
              {
                title: message.embed.title,
                url: null,
                timestamp: null,
                description: message.embed.description,
                images: [],
                fields: [],
              },
            ]
          : [],
        stickers: [],
        reactions: [],
        mentions: [],
      };
    }),
    messageCount: messages.length,
  };
}

/** `count` random chat messages, posted at `postedAt(i)`. */
export function randomMessages(
  seed: number,
  count: number,
  postedAt: (i: number, random: () => number) => number,
): DemoMessage[] {
  const { random, pick, int } = demoRandom(seed);
  return Array.from({ length: count }, (_, i) => {
    const domain = pick(DOMAINS);
    const withFile = random() < 0.15;
    return {
      author: pick(PEOPLE),
      content: pick(TEMPLATES)(domain, 2 + int(40)),
      postedAt: postedAt(i, random),
      ...(withFile ? { attachment: `${domain.replace(/\W/g, '_')}_${int(900) + 100}.txt` } : {}),
    };
  });
}

const DEMO_DAYS = 30;
const MESSAGES_PER_CHANNEL = 60;

/** What makes the catalog's example rule find something: a combo post in the example channel, reposted, and a bot's post. */
function plantedMessages(now: number): { day: number; message: DemoMessage }[] {
  const at = (day: number, hour: number) => demoPostedAt(now, day, () => hour / 20);
  const combo = 'FRESH acme-bank.com combo 8k mail:pass, private, checked today';
  return [
    { day: 3, message: { author: PEOPLE[2], content: combo, postedAt: at(3, 5), attachment: 'acme-bank_8k.txt' } },
    { day: 2, message: { author: PEOPLE[0], content: combo, postedAt: at(2, 9), attachment: 'acme-bank_8k.txt' } },
    {
      day: 1,
      message: {
        author: BOT,
        isBot: true,
        content: 'New upload',
        postedAt: at(1, 2),
        embed: {
          title: 'acme-bank.com logs (412)',
          description: 'Cloud updated: stealer logs with acme-bank.com cookies',
        },
      },
    },
  ];
}

/** The demo's documents: every demo channel's messages, with the day each was learned of. */
function demoDocuments(now: number): { day: number; document: DocumentInput }[] {
  const documents: { day: number; document: DocumentInput }[] = [];
  let seed = 2;
  for (const server of DEMO_SERVERS) {
    for (const channel of server.channels) {
      const dated = randomMessages(seed++, MESSAGES_PER_CHANNEL, (i, random) =>
        demoPostedAt(now, i % DEMO_DAYS, random),
      ).map((message, i) => ({ day: i % DEMO_DAYS, message }));
      if (channel.id === DEMO_SERVERS[0]!.channels[0]!.id) dated.push(...plantedMessages(now));
      const firstId = BigInt(channel.id) + 10_000_000n;
      for (const { record } of exportRecords(
        discordExport(
          server,
          channel,
          dated.map((entry) => entry.message),
          firstId,
        ),
        'demo',
      )) {
        if (typeof record === 'string') throw new Error(`demo message rejected: ${record}`);
        documents.push({
          day: dated[Number(BigInt(record.fields.message_id as string) - firstId)]!.day,
          document: record,
        });
      }
    }
  }
  return documents;
}

export async function loadDemoChat(context: SourceContext, now: number): Promise<number> {
  return writeDemoDocuments(context, 'chat_server', now, demoDocuments(now));
}
