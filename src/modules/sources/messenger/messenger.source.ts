import { sql } from 'kysely';
import { predicateCompilers } from '../common/query/message-search.sql.ts';
import { parseQuery, QuerySyntaxError } from '../common/query/query-language.ts';
import type { ArgError } from '../kit/args-validation.ts';
import { REJECTIONS_SHOWN } from '../common/ingest/ingest-kit.ts';
import type { BatchRule, MatchResult, SourceContext, SourceDefinition } from '../kit/source.ts';
import { generateCorpus } from './demo-corpus.ts';
import { createCorpusWriter } from './ingest/corpus-writer.ts';
import { createIngestService, type IngestFormat } from './ingest/ingest.service.ts';
import * as m0002 from './migrations/0002_messenger.ts';
import * as m0006 from './migrations/0006_bulk_fts.ts';
import * as searchReruns from './migrations/0003_search_reruns.ts';
import * as searchHistoryFile from './migrations/0004_search_history_file.ts';
import * as monthlyPartitions from './migrations/0005_monthly_partitions.ts';
import { collapseIdenticalTexts, MESSAGE_COLUMNS, messageHit, type MessageRow, type MessengerArgs } from './message-hits.ts';
import { createPercolator } from './percolator.ts';

const DEFAULT_CONTEXT_CHARS = 500;

async function matchOne(context: SourceContext, rawArgs: Record<string, unknown>, window: { since: number | null; until: number }, limit: number): Promise<MatchResult> {
  const args = rawArgs as unknown as MessengerArgs;
  const { tree } = parseQuery(args.query);
  const conditions = [predicateCompilers[context.engine](tree), sql`m.date <= ${window.until}`];
  if (window.since !== null) conditions.push(sql`m.date > ${window.since}`);
  if (args.channel_ids?.length) conditions.push(sql`m.channel_id in (${sql.join(args.channel_ids)})`);
  const where = sql.join(conditions, sql` and `);
  const { rows } = await sql<MessageRow>`
    with h as materialized (select m.id from messages m where ${where})
    select ${MESSAGE_COLUMNS} from h join messages m on m.id = h.id join channels c on c.id = m.channel_id
    order by m.date desc, m.id desc limit ${limit}`.execute(context.db);
  const { rows: counted } = await sql<{ total: number }>`select count(*) as total from messages m where ${where}`.execute(context.db);
  let hits = rows.map((row) => messageHit(row, tree, args.context_chars ?? DEFAULT_CONTEXT_CHARS));
  if (args.unique_only) hits = collapseIdenticalTexts(hits);
  return { hits, total: args.unique_only ? hits.length : Number(counted[0]!.total) };
}

function checkQuery(args: Record<string, unknown>): ArgError[] {
  try {
    parseQuery(args.query as string);
    return [];
  } catch (error) {
    if (!(error instanceof QuerySyntaxError)) throw error;
    return [{ field: 'args.query', message: error.message, rule: 3 }];
  }
}

/** The same refusal as the search's (`unknown channel ids`), so a rule and a search agree. */
async function checkChannels(context: SourceContext, args: Record<string, unknown>): Promise<ArgError[]> {
  const ids = (args as unknown as MessengerArgs).channel_ids;
  if (!ids?.length) return [];
  const rows = await context.db.selectFrom('channels').select('id').where('id', 'in', ids).execute();
  const known = new Set(rows.map((row) => Number(row.id)));
  const unknown = ids.filter((id) => !known.has(id));
  return unknown.length ? [{ field: 'args.channel_ids', message: `unknown channel ids: ${unknown.join(', ')}`, rule: 3 }] : [];
}

const writerOf = (context: SourceContext) => createCorpusWriter({ db: context.db, engine: context.engine, clock: context.clock, log: context.log });

export const messengerSource: SourceDefinition = {
  id: 1,
  name: 'messenger',
  alias: 'Messenger channels',
  description: 'Messages posted in tracked messenger channels (Telegram and alike), matched with the search query language.',
  serviceType: 'sync',
  frequency: 'daily',
  params: [
    { name: 'query', type: 'String', required: true, hint: 'Search query: terms, "phrases", AND, OR, NOT, ( )', example: '"fresh logs" AND (acme-bank.com OR acmebank)' },
    { name: 'channel_ids', type: 'Array[Int]', required: false, hint: 'Only these channels (ids from messenger-channels)', example: [12, 22] },
    { name: 'unique_only', type: 'Boolean', required: false, hint: 'Count identical texts posted in several channels once', example: true },
    { name: 'context_chars', type: 'Int', required: false, hint: 'Characters of text around the match in each hit', example: 200 },
  ],
  excludableFields: ['channel_id', 'channel_username', 'user_id', 'media_type'],
  filterableFields: ['channel_id', 'channel_username', 'user_id', 'has_media', 'media_type'],
  sortableFields: ['date', 'channel_id', 'message_id'],
  hasData: true,
  checkArgs: checkQuery,
  checkStoredReferences: checkChannels,
  match: matchOne,
  matchMany: (context: SourceContext, rules: BatchRule[], until: number, limit: number) =>
    createPercolator(
      rules.map((rule) => ({ ...rule, args: rule.args as unknown as MessengerArgs })),
      DEFAULT_CONTEXT_CHARS,
    ).run(context, until, limit),
  // The first two names predate source folders; a name is what a store remembers as applied.
  migrations: {
    '0002_messenger': m0002,
    '0006_bulk_fts': m0006,
    'messenger/0003_search_reruns': searchReruns,
    'messenger/0004_search_history_file': searchHistoryFile,
    'messenger/0005_monthly_partitions': monthlyPartitions,
  },
  ingesters: [
    {
      name: 'messenger',
      description: 'messenger messages from Telegram Desktop exports (result.json) or JSON Lines files, folders or - (stdin)',
      formats: ['auto', 'telegram', 'jsonl'],
      async run(context, inputs, options) {
        const ingest = createIngestService({ writer: writerOf(context) });
        const results = await ingest.ingest(inputs, { format: options.format as IngestFormat, category: options.category, progress: options.progress });
        const sum = (key: 'channels' | 'added' | 'duplicates') => results.reduce((n, r) => n + r[key], 0);
        const summary = {
          sources: results.length,
          failed: results.filter((r) => !r.ok).length,
          channels: sum('channels'),
          messages_added: sum('added'),
          duplicates_skipped: sum('duplicates'),
          rejected: results.reduce((n, r) => n + r.rejected.length, 0),
          results,
        };
        const lines = [
          `${summary.sources} sources (${summary.failed} failed): ${summary.channels} channels, ${summary.messages_added} messages added, ${summary.duplicates_skipped} duplicates skipped, ${summary.rejected} rejected`,
        ];
        for (const result of results) {
          for (const rejection of result.rejected.slice(0, 20)) lines.push(`  rejected ${result.source} ${rejection.location}: ${rejection.reason}`);
          if (result.rejected.length > 20) lines.push(`  … and ${result.rejected.length - 20} more rejected in ${result.source}`);
          if (!result.ok) lines.push(`  error: ${result.error}`);
        }
        const errors = results.flatMap((result) => [
          ...(result.ok ? [] : [{ location: result.source, reason: result.error ?? 'could not be read' }]),
          ...result.rejected.map((rejection) => ({ location: `${result.source} ${rejection.location}`, reason: rejection.reason })),
        ]);
        const tally = {
          records: summary.messages_added + summary.duplicates_skipped + summary.rejected,
          added: summary.messages_added,
          duplicates: summary.duplicates_skipped,
          rejected: summary.rejected,
          errors: errors.slice(0, REJECTIONS_SHOWN),
        };
        return { summary, lines, failed: summary.failed > 0, tally };
      },
    },
  ],
  async demo(context, now) {
    // Messages dated over the last 60 days, so the demo looks current whenever it is loaded.
    const corpus = await writerOf(context).write(generateCorpus({ seed: 2026, channels: 24, messages: 3000, start: new Date(now - 60 * 86_400_000), spanDays: 60 }));
    return `Demo corpus: ${corpus.added} messages added (try searching "fresh logs" AND acme-bank.com)`;
  },
};
