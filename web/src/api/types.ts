import type { paths } from './schema.gen.ts';

/** The JSON body of an operation's 200 response: `Ok<'/service/account/', 'get'>`. */
export type Ok<Path extends keyof paths, Method extends keyof paths[Path]> = paths[Path][Method] extends {
  responses: { 200: { content: { 'application/json': infer Body } } };
}
  ? Body
  : never;

export type SearchResponse = Ok<'/service/messenger-search-create/', 'post'>;
export type SearchResult = SearchResponse['results'][number];
export type HistoryItem = Ok<'/service/messenger-search-history/', 'get'>['items'][number];
