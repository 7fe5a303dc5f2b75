import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
import type { ChannelBatch, ChannelInput, MessageInput } from './corpus-writer.ts';
import { jsonErrorLocation, parseJson } from '../../common/ingest/ingest-kit.ts';
import { IngestError, linksInText, plausibleOrWhy, type Rejection, type WarnAt } from './ingest-errors.ts';

/**
 * The collector format (docs/ingest.md): one JSON object per line, each a message with its
 * channel. Consecutive lines of one channel are written together in batches.
 */
const BATCH_SIZE = 1000;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const optionalString = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null);

function readChannel(value: unknown): ChannelInput | string {
  if (!isObject(value)) return 'channel must be an object';
  const username = optionalString(value.username)?.replace(/^@/, '') ?? null;
  const title = optionalString(value.title) ?? username;
  if (!title) return 'channel needs a title or a username';
  const id = value.id;
  if (id !== undefined && id !== null && typeof id !== 'string' && typeof id !== 'number')
    return 'channel.id must be a string or number';
  if (value.is_active !== undefined && typeof value.is_active !== 'boolean')
    return 'channel.is_active must be a boolean';
  return {
    platform: optionalString(value.platform) ?? 'telegram',
    platformId: id === undefined || id === null ? null : String(id),
    username,
    title,
    category: optionalString(value.category),
    isActive: value.is_active as boolean | undefined,
  };
}

function readDate(value: unknown): number | null {
  if (typeof value === 'number' && Number.isFinite(value)) return value * 1000; // epoch seconds
  if (typeof value === 'string') {
    // A date-time without a zone is UTC, as for Telegram exports, whatever the machine's zone.
    const zoned = /T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(value) ? `${value}Z` : value;
    const ms = Date.parse(zoned);
    if (Number.isFinite(ms)) return ms;
  }
  return null;
}

/** A forward's origin, the bot, the replied-to message and the last edit, under the export's names. */
function originOf(
  record: Json,
  warn: (reason: string) => void,
): Pick<MessageInput, 'forwardedFrom' | 'forwardedFromId' | 'viaBot' | 'replyToMessageId' | 'editedAt'> {
  const originId = record.forwarded_from_id;
  const reply = record.reply_to_message_id;
  const edited = plausibleOrWhy(readDate(record.edited_at), 'edited date');
  if (edited.why) warn(edited.why);
  return {
    forwardedFrom: optionalString(record.forwarded_from),
    forwardedFromId: typeof originId === 'string' || typeof originId === 'number' ? String(originId) : null,
    viaBot: optionalString(record.via_bot),
    replyToMessageId: typeof reply === 'number' && Number.isSafeInteger(reply) ? reply : null,
    editedAt: edited.ms,
  };
}

function readMessage(record: Json, warn: (reason: string) => void): MessageInput | string {
  const { message_id: messageId, user_id: userId, text, links, media_type: mediaType, file_name: fileName } = record;
  if (typeof messageId !== 'number' || !Number.isSafeInteger(messageId)) return 'message_id must be an integer';
  if (userId !== undefined && userId !== null && (typeof userId !== 'number' || !Number.isSafeInteger(userId))) {
    return 'user_id must be an integer or null';
  }
  if (typeof text !== 'string') return 'text must be a string';
  const date = plausibleOrWhy(readDate(record.date), 'message date');
  if (date.why) return date.why;
  if (date.ms === null) return 'date must be ISO 8601 or epoch seconds';
  if (links !== undefined && links !== null && !(Array.isArray(links) && links.every((l) => typeof l === 'string'))) {
    return 'links must be an array of strings';
  }
  const media = optionalString(mediaType);
  const given = (links as string[] | null | undefined) ?? [];
  const found = linksInText(text);
  const allLinks = given.length === 0 && found.length < 2 ? found : [...new Set([...given, ...found])];
  if (!text.trim() && !media) return 'neither text nor media';
  return {
    messageId,
    userId: (userId as number | null | undefined) ?? null,
    text,
    date: date.ms,
    hasMedia: media !== null || record.has_media === true,
    mediaType: media,
    fileName: optionalString(fileName),
    links: allLinks.length ? allLinks : null,
    ...originOf(record, warn),
  };
}

const sameChannel = (a: ChannelInput, b: ChannelInput) =>
  a.platform === b.platform && a.platformId === b.platformId && a.username === b.username && a.title === b.title;

/** A \r still in a line (its \r\n ending is already cut off) ends a line too, as for readline. */
const atLoneReturns = (lines: string[]): string[] =>
  lines.some((line) => line.includes('\r')) ? lines.flatMap((line) => line.split('\r')) : lines;

/**
 * The lines of each chunk of the stream, split as readline splits them (at \n, \r\n or a lone
 * \r), with how many bytes the chunk held. A whole chunk is split at a time: awaiting each line
 * from readline cost as much as parsing it.
 */
async function* chunkLines(input: Readable): AsyncGenerator<{ lines: string[]; bytes: number }> {
  const decoder = new StringDecoder('utf8');
  // The pieces of the line still open: joined once it ends, however many chunks it spans.
  let open: string[] = [];
  const ended = (piece: string) => {
    const line = open.length ? [...open, piece].join('') : piece;
    open = [];
    return line.endsWith('\r') ? line.slice(0, -1) : line;
  };
  for await (const chunk of input as AsyncIterable<Buffer | string>) {
    const text = typeof chunk === 'string' ? chunk : decoder.write(chunk);
    const lines: string[] = [];
    let start = 0;
    for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
      lines.push(ended(text.slice(start, end)));
      start = end + 1;
    }
    if (start < text.length) open.push(text.slice(start));
    yield { lines: atLoneReturns(lines), bytes: typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length };
  }
  const last = ended(decoder.end());
  if (last) yield { lines: atLoneReturns([last]), bytes: 0 };
}

export async function* readJsonLines(
  input: Readable,
  source: string,
  rejected: Rejection[],
  onBytes?: (bytes: number) => void,
  warn: WarnAt = () => {},
): AsyncGenerator<ChannelBatch> {
  let lineNumber = 0;
  let pending: ChannelBatch | null = null;
  for await (const { lines, bytes } of chunkLines(input)) {
    onBytes?.(bytes);
    for (const line of lines) {
      lineNumber++;
      if (!line.trim()) continue;
      let record: unknown;
      try {
        record = parseJson(line);
      } catch (error) {
        throw new IngestError(
          source,
          `line ${lineNumber}, ${jsonErrorLocation(line, error).replace(/^line 1, /, '')}`,
          'malformed JSON',
        );
      }
      const location = `line ${lineNumber}`;
      if (!isObject(record)) {
        rejected.push({ location, reason: 'not a JSON object' });
        continue;
      }
      const channel = readChannel(record.channel);
      if (typeof channel === 'string') {
        rejected.push({ location, reason: channel });
        continue;
      }
      const message = readMessage(record, (reason) => warn(location, reason));
      if (typeof message === 'string') {
        rejected.push({ location, reason: message });
        continue;
      }
      if (pending && (!sameChannel(pending.channel, channel) || pending.messages.length >= BATCH_SIZE)) {
        yield pending;
        pending = null;
      }
      pending ??= { channel, messages: [] };
      pending.messages.push(message);
    }
  }
  if (pending) yield pending;
}
