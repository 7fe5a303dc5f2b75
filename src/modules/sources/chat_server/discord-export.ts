import { IngestError } from '../common/ingest/ingest-kit.ts';
import {
  orReason,
  readJsonDocument,
  type DocumentFormat,
  type DocumentRecord,
} from '../common/documents/document-ingest.ts';
import type { DocumentInput } from '../common/documents/document-store.ts';
import { isJsonObject, parseDate, RecordError, type JsonObject } from '../common/documents/record-fields.ts';

/**
 * DiscordChatExporter's JSON export of one channel (docs/ingest.md "Chat servers"):
 * `{guild, channel, dateRange, messages[], messageCount}`, snowflake ids as strings.
 *
 * An export is one JSON document, read whole up to MAX_EXPORT_BYTES; DiscordChatExporter's
 * `--partition` splits a larger channel into files under it.
 */
export const MAX_EXPORT_BYTES = 128 << 20;

/** The hit fields of a message, as stored (the preview of its text is added per hit). */
export type ChatMessageFields = {
  message_id: string;
  server_id: string;
  server_name: string;
  channel_id: string;
  channel_name: string;
  category: string | null;
  author_id: string;
  author_name: string;
  is_bot: boolean;
  timestamp: string;
  has_attachments: boolean;
  attachments: string[];
  url: string;
};

const SNOWFLAKE = /^\d{1,20}$/;

// DiscordChatExporter's system notifications (MessageKind 1-18): joins, calls, pins, renames.
// Their `content` is text the exporter wrote ("Changed the channel name."), not a user's.
const SYSTEM_KINDS = new Set([
  'RecipientAdd',
  'RecipientRemove',
  'Call',
  'ChannelNameChange',
  'ChannelIconChange',
  'ChannelPinnedMessage',
  'GuildMemberJoin',
  'ThreadCreated',
]);
const isSystemKind = (type: unknown) =>
  typeof type === 'string' &&
  (SYSTEM_KINDS.has(type) || (/^\d+$/.test(type) && Number(type) >= 1 && Number(type) <= 18));

const stringOf = (value: unknown): string | null => (typeof value === 'string' && value.trim() !== '' ? value : null);

function snowflake(value: unknown, name: string): string {
  if (typeof value !== 'string' || !SNOWFLAKE.test(value))
    throw new RecordError(`${name} must be a snowflake id (a string of digits)`);
  return value;
}

/** The guild and channel every message of the export shares; throws IngestError when it is no export. */
function exportContext(data: unknown, input: string) {
  const fail = (location: string, reason: string) =>
    new IngestError(input, location, `not a DiscordChatExporter JSON export: ${reason}`);
  if (!isJsonObject(data)) throw fail('top level', 'not a JSON object');
  const { guild, channel, messages } = data;
  if (!isJsonObject(guild) || typeof guild.id !== 'string' || !SNOWFLAKE.test(guild.id))
    throw fail('guild', 'no guild with a snowflake id');
  if (!isJsonObject(channel) || typeof channel.id !== 'string' || !SNOWFLAKE.test(channel.id))
    throw fail('channel', 'no channel with a snowflake id');
  if (!Array.isArray(messages)) throw fail('messages', 'no messages array');
  return {
    guild: { id: guild.id, name: stringOf(guild.name) ?? guild.id },
    channel: { id: channel.id, name: stringOf(channel.name) ?? channel.id, category: stringOf(channel.category) },
    messages: messages as unknown[],
  };
}

/** Guild 0 is DiscordChatExporter's "Direct Messages"; Discord links those under @me. */
const messageUrl = (guildId: string, channelId: string, messageId: string) =>
  `https://discord.com/channels/${guildId === '0' ? '@me' : guildId}/${channelId}/${messageId}`;

function listOf(value: unknown, name: string): JsonObject[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every(isJsonObject)) throw new RecordError(`${name} must be an array of objects`);
  return value;
}

/**
 * A message's document, or null for one with nothing to search (a system notification, a
 * sticker alone). The searched text is the content, then each embed's title and description,
 * then the attachments' file names, one per line.
 */
function messageDocument(message: unknown, context: ReturnType<typeof exportContext>): DocumentInput | null {
  if (!isJsonObject(message)) throw new RecordError('not a JSON object');
  if (isSystemKind(message.type)) return null;
  const id = snowflake(message.id, 'id');
  const posted = parseDate(message.timestamp);
  if (posted === null) throw new RecordError('timestamp must be an ISO 8601 date');
  const author = message.author;
  if (!isJsonObject(author)) throw new RecordError('author is required');
  const authorId = snowflake(author.id, 'author.id');
  if (message.content !== undefined && message.content !== null && typeof message.content !== 'string')
    throw new RecordError('content must be a string');
  const attachments = listOf(message.attachments, 'attachments').map(
    (attachment) => stringOf(attachment.fileName) ?? stringOf(attachment.url)?.split('/').pop() ?? 'attachment',
  );
  const embedTexts = listOf(message.embeds, 'embeds').flatMap((embed) => [
    stringOf(embed.title),
    stringOf(embed.description),
  ]);
  const text = [stringOf(message.content), ...embedTexts, ...attachments]
    .filter((part): part is string => part !== null)
    .join('\n');
  if (text === '') return null;
  const fields: ChatMessageFields = {
    message_id: id,
    server_id: context.guild.id,
    server_name: context.guild.name,
    channel_id: context.channel.id,
    channel_name: context.channel.name,
    category: context.channel.category,
    author_id: authorId,
    // A server nickname is what the community sees; the account name when there is none.
    author_name: stringOf(author.nickname) ?? stringOf(author.name) ?? authorId,
    is_bot: author.isBot === true,
    timestamp: new Date(posted).toISOString(),
    has_attachments: attachments.length > 0,
    attachments,
    url: messageUrl(context.guild.id, context.channel.id, id),
  };
  // Message ids are unique across Discord; the channel keeps a forged export from colliding.
  return { key: `${context.channel.id}:${id}`, text, fields };
}

/** The records of one parsed export, located as `messages[i]`. */
export function* exportRecords(data: unknown, input: string): Generator<DocumentRecord> {
  const context = exportContext(data, input);
  for (const [index, message] of context.messages.entries()) {
    const record = orReason(() => messageDocument(message, context));
    if (record !== null) yield { location: `messages[${index}]`, record };
  }
}

/** `--format discord`: `.json` exports, or one on standard input. */
export const discordFormat: DocumentFormat = {
  accepts: (file) => file.toLowerCase().endsWith('.json'),
  async *read(input, progress) {
    yield* exportRecords(await readJsonDocument(input, MAX_EXPORT_BYTES, progress), input);
  },
};
