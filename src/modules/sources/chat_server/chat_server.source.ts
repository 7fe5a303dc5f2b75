import type { ArgError } from '../kit/args-validation.ts';
import { fieldIn, fieldIs, queryErrors } from '../common/documents/document-match.ts';
import { documentSource } from '../common/documents/document-source.ts';
import type { SourceDefinition } from '../kit/source.ts';
import { DEMO_SERVERS, loadDemoChat } from './demo-chat.ts';
import { discordFormat } from './discord-export.ts';

interface ChatServerArgs {
  query: string;
  server_ids?: string[];
  channel_ids?: string[];
  include_bots?: boolean;
  context_chars?: number;
  unique_only?: boolean;
}

const DEFAULT_CONTEXT_CHARS = 300;
const MAX_CONTEXT_CHARS = 10_000;
const SNOWFLAKE = /^\d{1,20}$/;

function checkChatServerArgs(args: Record<string, unknown>): ArgError[] {
  const { server_ids: servers = [], channel_ids: channels = [], context_chars: contextChars } = args as Partial<ChatServerArgs>;
  const errors = queryErrors(args);
  for (const [name, ids] of [['server_ids', servers], ['channel_ids', channels]] as const) {
    ids.forEach((id, index) => {
      if (!SNOWFLAKE.test(id)) errors.push({ field: `args.${name}[${index}]`, message: 'must be a snowflake id (a string of digits)', rule: 3 });
    });
  }
  if (contextChars !== undefined && (contextChars < 1 || contextChars > MAX_CONTEXT_CHARS)) {
    errors.push({ field: 'args.context_chars', message: `must be between 1 and ${MAX_CONTEXT_CHARS}`, rule: 3 });
  }
  return errors;
}

const [exampleServer] = DEMO_SERVERS;

/**
 * Chat-server platform (id 2): messages of community servers such as Discord guilds, ingested
 * from DiscordChatExporter JSON exports into the document store (../documents) and matched with
 * the search query language. Snowflake ids exceed 2^53, so they are strings.
 */
export const chatServerSource: SourceDefinition = {
  id: 2,
  name: 'chat_server',
  alias: 'Chat servers (Discord)',
  description: 'Messages posted in tracked chat-server communities such as Discord servers, matched with the search query language.',
  serviceType: 'sync',
  frequency: 'daily',
  params: [
    { name: 'query', type: 'String', required: true, hint: 'Search query: terms, "phrases", AND, OR, NOT, ( )', example: '"acme-bank.com" AND (combo OR logs)' },
    { name: 'server_ids', type: 'Array[String]', required: false, hint: 'Only these servers (Discord guild snowflake ids, as strings)', example: [exampleServer!.id] },
    { name: 'channel_ids', type: 'Array[String]', required: false, hint: 'Only these channels (snowflake ids, as strings)', example: [exampleServer!.channels[0]!.id] },
    { name: 'include_bots', type: 'Boolean', required: false, hint: 'Also report messages written by bot accounts (off by default)', example: false },
    { name: 'unique_only', type: 'Boolean', required: false, hint: 'Count identical texts posted several times once (the newest)', example: true },
    { name: 'context_chars', type: 'Int', required: false, hint: `Characters of text around the match in each hit (default ${DEFAULT_CONTEXT_CHARS})`, example: 200 },
  ],
  excludableFields: ['server_id', 'channel_id', 'author_id'],
  filterableFields: ['server_id', 'server_name', 'channel_id', 'channel_name', 'category', 'author_id', 'author_name', 'is_bot', 'has_attachments'],
  sortableFields: ['timestamp', 'discovered_at', 'server_name', 'channel_name', 'author_name'],
  hasData: true,
  checkArgs: checkChatServerArgs,
  ...documentSource<ChatServerArgs>({
    name: 'chat_server',
    search: (args) => {
      const filters = [];
      if (args.server_ids?.length) filters.push(fieldIn('server_id', args.server_ids));
      if (args.channel_ids?.length) filters.push(fieldIn('channel_id', args.channel_ids));
      if (!args.include_bots) filters.push(fieldIs('is_bot', false));
      return { filters, contextChars: args.context_chars ?? DEFAULT_CONTEXT_CHARS, uniqueTexts: args.unique_only === true, previewField: 'content' };
    },
    ingester: {
      description: 'chat-server messages from DiscordChatExporter JSON exports (one channel a file), files, folders or - (stdin)',
      noun: 'messages',
      formats: { discord: discordFormat },
    },
  }),
  async demo(context, now) {
    const added = await loadDemoChat(context, now);
    return `Demo chat servers: ${added} Discord messages added (try chat_server with the query "acme-bank.com" AND (combo OR logs))`;
  },
};
