import type { SourceDefinition } from '../../kit/source.ts';
import { documentIngester, type DocumentFormat } from './document-ingest.ts';
import { matchDocuments, type DocumentSearch } from './document-match.ts';
import { documentStoreMigrations } from './document-store.ts';

/**
 * What makes a source one of the document store's (chat_server, hacker_forum, paste_site): a
 * rule's `query` matched over the source's stored documents, narrowed and shown as `search` makes
 * of the rule's other args; one `dragnet ingest <name>` target; the store's tables.
 */
export function documentSource<Args extends { query: string }>(options: {
  name: string;
  search(args: Args): Omit<DocumentSearch, 'source' | 'query'>;
  ingester: { description: string; noun: string; formats: Record<string, DocumentFormat> };
}): Pick<SourceDefinition, 'match' | 'migrations' | 'ingesters'> {
  return {
    match(context, rawArgs, window, limit) {
      const args = rawArgs as unknown as Args;
      return matchDocuments(context, { source: options.name, query: args.query, ...options.search(args) }, window, limit);
    },
    migrations: documentStoreMigrations,
    ingesters: [documentIngester({ name: options.name, source: options.name, ...options.ingester })],
  };
}
