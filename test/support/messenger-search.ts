import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { MessageItem } from '../../src/modules/search/search.types.ts';
import type { TestApp } from './test-app.ts';

/** The response shapes of spec 2.3 and 2.4 as the tests read them. */
export type MessageItemBody = MessageItem;

export interface QueryNodeBody {
  type: string;
  value?: string;
  phrase?: boolean;
  position?: number;
  children?: QueryNodeBody[];
  child?: QueryNodeBody;
}

export interface SearchResponseBody {
  results: MessageItemBody[];
  total: number;
  channels_matched: number;
  page: number;
  page_size: number;
  total_pages: number;
  query_info: { query: string; parsed: QueryNodeBody; normalized: string; terms: string[]; truncated: boolean };
  search_history_id: number;
  warning: string | null;
  follow_up_token: string;
}

export interface HistoryItemBody {
  id: number;
  query: string;
  parsed_query: string;
  total_matches: number;
  channels_matched: number;
  searched_at: string;
}

export interface ListBody<T> {
  items: T[];
  total: number;
  page: number;
  page_size: number;
  total_pages: number;
}

export const SEARCH_PATH = '/service/messenger-search-create/';

export interface SearchRequestBody {
  query: string;
  channel_ids?: number[] | null;
  context_chars?: number;
  unique_only?: boolean;
  page?: number;
  page_size?: number;
}

/** POSTs a search; the raw response, for error cases. */
export const postSearch = (t: TestApp, token: string, body: unknown): Promise<LightMyRequestResponse> =>
  t.request({ method: 'POST', url: SEARCH_PATH, token, body });

/** POSTs a search that must succeed and returns its body. */
export async function search(t: TestApp, token: string, body: SearchRequestBody): Promise<SearchResponseBody> {
  const response = await postSearch(t, token, body);
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as SearchResponseBody;
}

/** GETs a path that must answer 200 with JSON and returns the body. */
export async function getJson<T>(t: TestApp, token: string, url: string): Promise<T> {
  const response = await t.request({ method: 'GET', url, token });
  expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
  return response.json() as T;
}

/** The message ids of a result page, in order. */
export const idsOf = (body: { results: MessageItemBody[] }): number[] => body.results.map((r) => r.message_id);

/** Every result of a search, read page by page through the search endpoint. */
export async function allIds(t: TestApp, token: string, body: SearchRequestBody): Promise<number[]> {
  const first = await search(t, token, { ...body, page: 1, page_size: 100 });
  const ids = idsOf(first);
  for (let page = 2; page <= first.total_pages; page++)
    ids.push(...idsOf(await search(t, token, { ...body, page, page_size: 100 })));
  return ids;
}
