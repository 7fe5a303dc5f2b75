import type { MessageItem } from '../../src/modules/search/search.types.ts';
import { expect } from 'vitest';
import { createTestApp, type TestApp } from '../support/test-app.ts';
import type { TestStoreLocation } from '../support/test-store.ts';

/** `dragnet --json ingest messenger` output. */
export interface IngestSummary {
  sources: number;
  failed: number;
  channels: number;
  messages_added: number;
  duplicates_skipped: number;
  rejected: number;
  warnings: { reason: string; count: number; examples: string[] }[];
  results: {
    source: string;
    format: 'telegram' | 'jsonl';
    ok: boolean;
    channels: number;
    added: number;
    duplicates: number;
    rejected: { location: string; reason: string }[];
    warnings: Record<string, { count: number; examples: string[] }>;
    error?: string;
  }[];
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

export type { MessageItem };

/** A query that only excludes a term nobody writes: it matches every message. */
const EVERYTHING = '-qzxjvkqw';

/**
 * An app and a logged-in user on a store that the CLI (or the service) wrote: reads what was
 * stored through the HTTP API only.
 */
export interface StoreView {
  t: TestApp;
  channels(): Promise<ChannelItem[]>;
  /** Every stored message, keyed "<channel title>#<message id>". */
  messages(): Promise<Map<string, MessageItem & { channel_title: string }>>;
  search(query: string): Promise<{ total: number; results: MessageItem[] }>;
  close(): Promise<void>;
}

let userCounter = 0;

export async function openStoreView(location: TestStoreLocation): Promise<StoreView> {
  const t = await createTestApp({ location });
  const email = `reader${++userCounter}@ingest.test`;
  await t.createUser({ org: `Ingest Readers ${userCounter}`, email });
  const { access } = await t.login(email);

  const search = async (query: string, page = 1) => {
    const response = await t.request({
      method: 'POST',
      url: '/service/messenger-search-create/',
      token: access,
      body: { query, page, page_size: 100, context_chars: 5000 },
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as { total: number; total_pages: number; results: MessageItem[] };
  };

  const channels = async () => {
    const response = await t.request({
      method: 'GET',
      url: '/service/messenger-channels/?page_size=500',
      token: access,
    });
    expect(response.statusCode, response.body).toBe(200);
    return (response.json() as { items: ChannelItem[] }).items;
  };

  return {
    t,
    channels,
    search,
    async messages() {
      const titles = new Map((await channels()).map((c) => [c.id, c.title]));
      const all = new Map<string, MessageItem & { channel_title: string }>();
      for (let page = 1; ; page++) {
        const body = await search(EVERYTHING, page);
        for (const item of body.results) {
          const title = titles.get(item.channel_id) ?? `?${item.channel_id}`;
          const key = `${title}#${item.message_id}`;
          expect(all.has(key), `${key} listed twice`).toBe(false);
          all.set(key, { ...item, channel_title: title });
        }
        if (page >= body.total_pages) break;
      }
      return all;
    },
    close: () => t.close(),
  };
}

/** Links in a stable order: the order in which they are found is not part of the contract. */
export const sortedLinks = (links: string[] | null) => (links === null ? null : [...links].sort());
