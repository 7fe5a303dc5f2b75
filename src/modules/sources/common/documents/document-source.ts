import type { Static, TObject, TString } from '@sinclair/typebox';
import type { ArgError } from '../../kit/source.ts';
import { preparedOrErrors, type SourcePlugin } from '../../kit/source.ts';
import { parseQueryArg } from '../query/query-arg.ts';
import { documentIngester, type DocumentFormat } from './document-ingest.ts';
import { matchDocuments, type DocumentSearch } from './document-match.ts';
import { documentContext, type Conversation } from './document-context.ts';
import { documentStoreMigrations } from './document-store.ts';
import { newestRecord } from '../../kit/newest-record.ts';

/**
 * What makes a source one of the document store's (chat_server, hacker_forum, paste_site): a
 * rule's `query` matched over the source's stored documents, narrowed and shown as `search` makes
 * of the rule's other args; one `dragnet ingest <name>` target; the store's tables. The query is
 * parsed once, by prepare, with the source's own `check` of its other args.
 */
export function documentSource<Args extends TObject<{ query: TString }>>(options: {
  name: string;
  args: Args;
  check?(args: Static<Args>): ArgError[];
  search(args: Static<Args>): Omit<DocumentSearch, 'source' | 'tree'>;
  ingester: { description: string; noun: string; formats: Record<string, DocumentFormat> };
  /** Posts that belong to a conversation (a channel, a thread) can be shown in it. */
  conversation?: Conversation;
}): Pick<
  SourcePlugin<Args, DocumentSearch>,
  'args' | 'prepare' | 'match' | 'migrations' | 'ingesters' | 'hitContext' | 'newestRecordAt'
> {
  return {
    ...(options.conversation ? { hitContext: documentContext(options.name, options.conversation) } : {}),
    args: options.args,
    prepare(args) {
      const errors: ArgError[] = [];
      const tree = parseQueryArg(args.query, errors);
      errors.push(...(options.check?.(args) ?? []));
      return preparedOrErrors(errors, () => ({ source: options.name, tree: tree!, ...options.search(args) }));
    },
    match: matchDocuments,
    newestRecordAt: newestRecord('documents', 'discovered_at', { column: 'source', value: options.name }),
    migrations: documentStoreMigrations,
    ingesters: [documentIngester({ name: options.name, source: options.name, ...options.ingester })],
  };
}
