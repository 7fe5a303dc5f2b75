import type { ChannelBatch, MessageInput } from './corpus-writer.ts';
import { IngestError, linksInText, plausibleOrWhy, type Rejection, type WarnAt } from './ingest-errors.ts';

/**
 * Telegram Desktop's JSON export (result.json): a single chat `{name, type, id, messages}` or a
 * full-account export whose chats are under `chats.list`. Service messages are skipped; `text`
 * is a string or an array of strings and entity objects; `date_unixtime` (UTC) is preferred
 * over `date`, which Telegram writes in the exporter's local time without a zone (read as UTC),
 * and so for `edited_unixtime` and `edited`. A message dated in the future or before 1990 is
 * rejected (its date is what every search and rule window goes by).
 */
type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The text and its links: URLs written in plain parts, plus link and text_link entities. Only
 * plain parts are scanned for URLs: scanning the joined text would glue an entity's URL to the
 * next part's words ("…?utm=telegram" + "hidden").
 */
function flattenText(text: unknown): { text: string; links: string[] } {
  if (typeof text === 'string') return { text, links: linksInText(text) };
  if (!Array.isArray(text)) return { text: '', links: [] };
  let out = '';
  const links: string[] = [];
  for (const part of text) {
    if (typeof part === 'string') {
      out += part;
      links.push(...linksInText(part));
    } else if (isObject(part)) {
      const partText = typeof part.text === 'string' ? part.text : '';
      out += partText;
      if (part.type === 'link' && partText) links.push(partText);
      else if (part.type === 'plain' && partText) links.push(...linksInText(partText));
      if (part.type === 'text_link' && typeof part.href === 'string') links.push(part.href);
    }
  }
  return { text: out, links };
}

/** A date as the export writes it: `<name>_unixtime` (epoch seconds, a string), else `<name>` (local time without a zone, read as UTC). */
function exportDate(message: Json, name: 'date' | 'edited'): number | null {
  const unixtime = message[`${name}_unixtime`];
  if (typeof unixtime === 'string' || typeof unixtime === 'number') {
    const seconds = Number(unixtime);
    if (Number.isFinite(seconds)) return seconds * 1000;
  }
  const local = message[name];
  if (typeof local === 'string') {
    const zoned = /[zZ]|[+-]\d\d:?\d\d$/.test(local) ? local : `${local}Z`;
    const ms = Date.parse(zoned);
    if (Number.isFinite(ms)) return ms;
  }
  return null;
}

const nonEmpty = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value : null);

/**
 * Where the message came from and what became of it: a forward's origin (`forwarded_from` is
 * null when its sender hid it; `saved_from` in Saved Messages), the bot it was sent via, the
 * message it replies to, and its last edit, which `warn` hears of when implausible.
 */
function originOf(
  message: Json,
  warn: (reason: string) => void,
): Pick<MessageInput, 'forwardedFrom' | 'forwardedFromId' | 'viaBot' | 'replyToMessageId' | 'editedAt'> {
  const originId = message.forwarded_from_id;
  const reply = message.reply_to_message_id;
  const edited = plausibleOrWhy(exportDate(message, 'edited'), 'edited date');
  if (edited.why) warn(edited.why);
  return {
    forwardedFrom: nonEmpty(message.forwarded_from) ?? nonEmpty(message.saved_from),
    forwardedFromId: typeof originId === 'string' || typeof originId === 'number' ? String(originId) : null,
    viaBot: nonEmpty(message.via_bot),
    replyToMessageId: typeof reply === 'number' && Number.isSafeInteger(reply) ? reply : null,
    editedAt: edited.ms,
  };
}

const numericId = (value: unknown): number | null => {
  if (typeof value !== 'string') return null;
  const match = /^user(\d+)$/.exec(value);
  return match ? Number(match[1]) : null;
};

function media(message: Json): Pick<MessageInput, 'hasMedia' | 'mediaType' | 'fileName'> {
  const file = typeof message.file === 'string' ? message.file : null;
  const fileName =
    typeof message.file_name === 'string'
      ? message.file_name
      : file && !file.startsWith('(')
        ? (file.split('/').pop() ?? null)
        : null;
  const mediaType =
    typeof message.media_type === 'string'
      ? message.media_type
      : message.photo !== undefined
        ? 'photo'
        : file !== null
          ? 'document'
          : null;
  return { hasMedia: mediaType !== null, mediaType, fileName };
}

function parseChat(chat: Json, path: string, source: string, rejected: Rejection[], warn: WarnAt): ChannelBatch {
  if (!Array.isArray(chat.messages)) throw new IngestError(source, `${path}.messages`, 'is not an array of messages');
  const title = typeof chat.name === 'string' && chat.name ? chat.name : 'Untitled chat';
  const messages: MessageInput[] = [];
  chat.messages.forEach((raw, index) => {
    const location = `${path}.messages[${index}]`;
    if (!isObject(raw)) return rejected.push({ location, reason: 'not an object' });
    if (raw.type !== undefined && raw.type !== 'message') return; // service messages: joins, calls, pins
    if (typeof raw.id !== 'number' || !Number.isSafeInteger(raw.id))
      return rejected.push({ location, reason: 'id is not an integer' });
    const date = plausibleOrWhy(exportDate(raw, 'date'), 'message date');
    if (date.why) return rejected.push({ location, reason: date.why });
    if (date.ms === null) return rejected.push({ location, reason: 'no readable date or date_unixtime' });
    const { text, links } = flattenText(raw.text ?? raw.text_entities);
    const attachment = media(raw);
    if (!text.trim() && !attachment.hasMedia) return rejected.push({ location, reason: 'neither text nor media' });
    const allLinks = [...new Set(links)];
    messages.push({
      messageId: raw.id,
      userId: numericId(raw.from_id),
      text,
      date: date.ms,
      ...attachment,
      links: allLinks.length ? allLinks : null,
      ...originOf(raw, (reason) => warn(location, reason)),
    });
  });
  return {
    channel: {
      platform: 'telegram',
      platformId: typeof chat.id === 'number' || typeof chat.id === 'string' ? String(chat.id) : null,
      title,
    },
    messages,
  };
}

export function parseTelegramExport(
  document: unknown,
  source: string,
  rejected: Rejection[],
  warn: WarnAt = () => {},
): ChannelBatch[] {
  if (!isObject(document)) throw new IngestError(source, '$', 'a Telegram export is a JSON object');
  if (Array.isArray(document.messages)) return [parseChat(document, '$', source, rejected, warn)];
  const chats = isObject(document.chats) ? document.chats.list : undefined;
  if (!Array.isArray(chats)) {
    throw new IngestError(source, '$', 'neither a chat export (messages[]) nor a full export (chats.list[])');
  }
  return chats.map((chat, index) => {
    if (!isObject(chat)) throw new IngestError(source, `$.chats.list[${index}]`, 'is not a chat object');
    return parseChat(chat, `$.chats.list[${index}]`, source, rejected, warn);
  });
}
