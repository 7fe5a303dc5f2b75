import type { ChannelBatch, MessageInput } from '../../src/modules/sources/messenger/index.ts';
import type { TestApp } from './test-app.ts';

/**
 * Builders for messenger corpora loaded straight into the store (`t.container.corpus.write`),
 * so search tests control every message field and date.
 */

/** The epoch of test messages: dates are given as minutes after it unless stated otherwise. */
export const CORPUS_EPOCH = Date.parse('2026-01-01T00:00:00Z');

export const minutesAfterEpoch = (minutes: number): number => CORPUS_EPOCH + minutes * 60_000;

export type MessageOptions = Partial<Omit<MessageInput, 'messageId' | 'text' | 'date'>> & {
  /** Epoch milliseconds or an ISO string; default: `messageId` minutes after the epoch. */
  date?: number | string;
};

/** A message with no media, no links and user id 0 unless overridden. */
export function message(messageId: number, text: string, options: MessageOptions = {}): MessageInput {
  const { date, ...rest } = options;
  return {
    messageId,
    userId: 0,
    text,
    date: date === undefined ? minutesAfterEpoch(messageId) : typeof date === 'string' ? Date.parse(date) : date,
    hasMedia: false,
    mediaType: null,
    fileName: null,
    links: null,
    ...rest,
  };
}

export interface ChannelOptions {
  /** Default: the username, or "Untitled" when there is none. */
  title?: string;
  category?: string | null;
  isActive?: boolean;
}

/** A telegram channel batch. `username` null makes a channel known by its title only. */
export function channel(username: string | null, messages: MessageInput[], options: ChannelOptions = {}): ChannelBatch {
  return {
    channel: {
      platform: 'telegram',
      username,
      title: options.title ?? username ?? 'Untitled',
      category: options.category ?? null,
      ...(options.isActive === undefined ? {} : { isActive: options.isActive }),
    },
    messages,
  };
}

/** How search results name a channel: its username, else its title. */
export const channelLabel = (batch: ChannelBatch): string => batch.channel.username ?? batch.channel.title;

/** Writes the batches in one transaction, as one ingested source would. */
export async function loadCorpus(t: TestApp, batches: ChannelBatch[]): Promise<void> {
  await t.container.corpus.write(batches);
}

export interface ChannelItem {
  id: number;
  platform: string;
  platform_id: string | null;
  username: string | null;
  title: string;
  category_id: number | null;
  category_name: string | null;
  is_active: boolean;
  last_scraped_at: string | null;
  total_messages_scraped: number;
}

/** Channel ids by label (username, else title), read over HTTP as a client would. */
export async function channelIdsByLabel(t: TestApp, token: string): Promise<Record<string, number>> {
  const response = await t.request({ method: 'GET', url: '/service/messenger-channels/?page_size=500', token });
  if (response.statusCode !== 200) throw new Error(`channel list failed: ${response.statusCode} ${response.body}`);
  const { items } = response.json() as { items: ChannelItem[] };
  return Object.fromEntries(items.map((c) => [c.username ?? c.title, c.id]));
}
