import { Type, type Static } from '@sinclair/typebox';
import type { ArgError } from '../kit/source.ts';
import { fieldIn, fieldIs } from '../common/documents/document-match.ts';
import { documentSource } from '../common/documents/document-source.ts';
import { stringOrNull } from '../common/documents/document-context.ts';
import { defineSource } from '../kit/source.ts';
import { DEMO_SERVERS, loadDemoChat } from './demo-chat.ts';
import { discordFormat } from './discord-export.ts';
import { chatServerStix } from './chat-server-stix.ts';

const DEFAULT_CONTEXT_CHARS = 300;
const MAX_CONTEXT_CHARS = 10_000;
const SNOWFLAKE = /^\d{1,20}$/;

const [exampleServer] = DEMO_SERVERS;

const chatServerArgs = Type.Object({
  query: Type.String({
    description: 'Search query: terms, "phrases", AND, OR, NOT, ( )',
    examples: ['"acme-bank.com" AND (combo OR logs)'],
  }),
  server_ids: Type.Optional(
    Type.Array(Type.String(), {
      description: 'Only these servers (Discord guild snowflake ids, as strings)',
      examples: [[exampleServer!.id]],
    }),
  ),
  channel_ids: Type.Optional(
    Type.Array(Type.String(), {
      description: 'Only these channels (snowflake ids, as strings)',
      examples: [[exampleServer!.channels[0]!.id]],
    }),
  ),
  include_bots: Type.Optional(
    Type.Boolean({ description: 'Also report messages written by bot accounts (off by default)', examples: [false] }),
  ),
  unique_only: Type.Optional(
    Type.Boolean({ description: 'Count identical texts posted several times once (the newest)', examples: [true] }),
  ),
  context_chars: Type.Optional(
    Type.Integer({
      description: `Characters of text around the match in each hit (default ${DEFAULT_CONTEXT_CHARS})`,
      examples: [200],
    }),
  ),
});

/** The checks of the args besides the query's syntax. */
function checkChatServerArgs(args: Static<typeof chatServerArgs>): ArgError[] {
  const { server_ids: servers = [], channel_ids: channels = [], context_chars: contextChars } = args;
  const errors: ArgError[] = [];
  for (const [name, ids] of [
    ['server_ids', servers],
    ['channel_ids', channels],
  ] as const) {
    ids.forEach((id, index) => {
      if (!SNOWFLAKE.test(id))
        errors.push({
          field: `args.${name}[${index}]`,
          message: 'must be a snowflake id (a string of digits)',
          rule: 3,
        });
    });
  }
  if (contextChars !== undefined && (contextChars < 1 || contextChars > MAX_CONTEXT_CHARS)) {
    errors.push({ field: 'args.context_chars', message: `must be between 1 and ${MAX_CONTEXT_CHARS}`, rule: 3 });
  }
  return errors;
}

/**
 * Chat-server platform (id 2): messages of community servers such as Discord guilds, ingested
 * from DiscordChatExporter JSON exports into the document store (../documents) and matched with
 * the search query language. Snowflake ids exceed 2^53, so they are strings.
 */
export const chatServerSource = defineSource({
  stix: chatServerStix,
  id: 2,
  name: 'chat_server',
  alias: 'Chat servers (Discord)',
  description:
    'Messages posted in tracked chat-server communities such as Discord servers, matched with the search query language.',
  serviceType: 'sync',
  frequency: 'daily',
  excludableFields: ['server_id', 'channel_id', 'author_id'],
  filterableFields: [
    'server_id',
    'server_name',
    'channel_id',
    'channel_name',
    'category',
    'author_id',
    'author_name',
    'is_bot',
    'has_attachments',
  ],
  sortableFields: ['timestamp', 'discovered_at', 'server_name', 'channel_name', 'author_name'],
  hasData: true,
  ...documentSource({
    name: 'chat_server',
    args: chatServerArgs,
    check: checkChatServerArgs,
    search: (args) => {
      const filters = [];
      if (args.server_ids?.length) filters.push(fieldIn('server_id', args.server_ids));
      if (args.channel_ids?.length) filters.push(fieldIn('channel_id', args.channel_ids));
      if (!args.include_bots) filters.push(fieldIs('is_bot', false));
      return {
        filters,
        contextChars: args.context_chars ?? DEFAULT_CONTEXT_CHARS,
        uniqueTexts: args.unique_only === true,
        previewField: 'content',
      };
    },
    conversation: {
      field: 'channel_id',
      title: (fields) => `${String(fields.server_name)} › #${String(fields.channel_name)}`,
      author: (fields) => stringOrNull(fields.author_name ?? fields.author_id),
      date: (fields) => stringOrNull(fields.timestamp),
      postId: (fields) => String(fields.message_id),
    },
    ingester: {
      description:
        'chat-server messages from DiscordChatExporter JSON exports (one channel a file), files, folders or - (stdin)',
      noun: 'messages',
      formats: { discord: discordFormat },
    },
  }),
  async demo(context, now) {
    const added = await loadDemoChat(context, now);
    return `Demo chat servers: ${added} Discord messages added (try chat_server with the query "acme-bank.com" AND (combo OR logs))`;
  },
});
