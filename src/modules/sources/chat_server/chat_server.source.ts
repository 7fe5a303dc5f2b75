import { sourceWithoutData } from '../source.ts';

/**
 * Chat-server platform (id 2): messages of public community servers such as Discord guilds,
 * ingested from DiscordChatExporter-style exports. Snowflake ids exceed 2^53, so they are Strings.
 *
 * Hit data: message_id, server_id, server_name, channel_id, channel_name, category, author_id,
 * author_name, is_bot, timestamp, content, has_attachments, attachments (file names), url.
 */
export const chatServerSource = sourceWithoutData({
  id: 2,
  name: 'chat_server',
  alias: 'Chat servers (Discord)',
  description: 'Messages posted in tracked chat-server communities such as Discord servers, matched with the search query language.',
  serviceType: 'sync',
  frequency: 'daily',
  params: [
    { name: 'query', type: 'String', required: true, hint: 'Search query: terms, "phrases", AND, OR, NOT, ( )', example: '"acme-bank.com" AND (combo OR logs)' },
    { name: 'server_ids', type: 'Array[String]', required: false, hint: 'Only these servers (Discord guild snowflake ids, as strings)', example: ['253601524398293010'] },
    { name: 'channel_ids', type: 'Array[String]', required: false, hint: 'Only these channels (snowflake ids, as strings)', example: ['497802346320101387'] },
    { name: 'include_bots', type: 'Boolean', required: false, hint: 'Also report messages written by bot accounts (off by default)', example: false },
  ],
  excludableFields: ['server_id', 'channel_id', 'author_id'],
  filterableFields: ['server_id', 'server_name', 'channel_id', 'channel_name', 'author_id', 'is_bot', 'has_attachments'],
  sortableFields: ['timestamp', 'server_id', 'channel_id', 'message_id'],
});
