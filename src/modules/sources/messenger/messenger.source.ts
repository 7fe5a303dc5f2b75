import { Type, type Static } from '@sinclair/typebox';
import { sql } from 'kysely';
import { predicateCompilers } from '../common/query/message-search.sql.ts';
import { parseQueryArg } from '../common/query/query-arg.ts';
import type { ArgError } from '../kit/source.ts';
import { REJECTIONS_SHOWN, warningLines, warningsOf } from '../common/ingest/ingest-kit.ts';
import {
  defineSource,
  preparedOrErrors,
  type MatchResult,
  type MatchWindow,
  type Prepared,
  type SourceContext,
} from '../kit/source.ts';
import { generateCorpus } from './demo-corpus.ts';
import { createCorpusWriter } from './ingest/corpus-writer.ts';
import { createIngestService, type IngestFormat } from './ingest/ingest.service.ts';
import * as m0002 from './migrations/0002_messenger.ts';
import * as m0006 from './migrations/0006_bulk_fts.ts';
import * as searchReruns from './migrations/0003_search_reruns.ts';
import * as searchHistoryFile from './migrations/0004_search_history_file.ts';
import * as monthlyPartitions from './migrations/0005_monthly_partitions.ts';
import * as messageOrigin from './migrations/0007_message_origin.ts';
import * as searchReadPosition from './migrations/0008_search_read_position.ts';
import * as wordIndex from './migrations/0009_word_index.ts';
import * as dropTextTrigrams from './migrations/0010_drop_text_trigrams.ts';
import * as channelWordIndex from './migrations/0011_channel_word_index.ts';
import * as wordBitmaps from './migrations/0012_word_bitmaps.ts';
import * as channelWordBitmaps from './migrations/0013_channel_word_bitmaps.ts';
import * as wordIndexPendingList from './migrations/0014_word_index_pending_list.ts';
import * as longWordsIndex from './migrations/0015_long_words_index.ts';
import * as channelTextIndex from './migrations/0016_channel_text_index.ts';
import {
  collapseIdenticalTexts,
  MESSAGE_COLUMNS,
  messageHit,
  type MessageRow,
  type MessengerQuery,
} from './message-hits.ts';
import { messageContext } from './message-context.ts';
import { createPercolator } from './percolator.ts';
import { newestRecord } from '../kit/newest-record.ts';
import { messengerStix } from './messenger-stix.ts';

const DEFAULT_CONTEXT_CHARS = 500;

const messengerArgs = Type.Object({
  query: Type.String({
    description: 'Search query: terms, "phrases", AND, OR, NOT, ( )',
    examples: ['"fresh logs" AND (acme-bank.com OR acmebank)'],
  }),
  channel_ids: Type.Optional(
    Type.Array(Type.Integer(), {
      description: 'Only these channels (ids from messenger-channels)',
      examples: [[12, 22]],
    }),
  ),
  unique_only: Type.Optional(
    Type.Boolean({ description: 'Count identical texts posted in several channels once', examples: [true] }),
  ),
  context_chars: Type.Optional(
    Type.Integer({ description: 'Characters of text around the match in each hit', examples: [200] }),
  ),
});
type MessengerArgs = Static<typeof messengerArgs>;

function prepareQuery(args: MessengerArgs): Prepared<MessengerQuery> {
  const errors: ArgError[] = [];
  const tree = parseQueryArg(args.query, errors);
  return preparedOrErrors(errors, () => ({
    tree: tree!,
    channelIds: args.channel_ids?.length ? args.channel_ids : null,
    uniqueOnly: args.unique_only ?? false,
    contextChars: args.context_chars ?? DEFAULT_CONTEXT_CHARS,
  }));
}

async function matchOne(
  context: SourceContext,
  args: MessengerQuery,
  window: MatchWindow,
  limit: number,
): Promise<MatchResult> {
  const { tree } = args;
  const conditions = [predicateCompilers[context.engine](tree), sql`m.date <= ${window.until}`];
  if (window.since !== null) conditions.push(sql`m.date > ${window.since}`);
  if (args.channelIds) conditions.push(sql`m.channel_id in (${sql.join(args.channelIds)})`);
  const where = sql.join(conditions, sql` and `);
  const { rows } = await sql<MessageRow>`
    with h as materialized (select m.id from messages m where ${where})
    select ${MESSAGE_COLUMNS} from h join messages m on m.id = h.id join channels c on c.id = m.channel_id
    order by m.date desc, m.id desc limit ${limit}`.execute(context.db);
  const { rows: counted } = await sql<{
    total: number;
  }>`select count(*) as total from messages m where ${where}`.execute(context.db);
  let hits = rows.map((row) => messageHit(row, tree, args.contextChars));
  if (args.uniqueOnly) hits = collapseIdenticalTexts(hits);
  return { hits, total: args.uniqueOnly ? hits.length : Number(counted[0]!.total) };
}

/** The same refusal as the search's (`unknown channel ids`), so a rule and a search agree. */
async function checkChannels(context: SourceContext, args: MessengerArgs): Promise<ArgError[]> {
  const ids = args.channel_ids;
  if (!ids?.length) return [];
  const rows = await context.db.selectFrom('channels').select('id').where('id', 'in', ids).execute();
  const known = new Set(rows.map((row) => Number(row.id)));
  const unknown = ids.filter((id) => !known.has(id));
  return unknown.length
    ? [{ field: 'args.channel_ids', message: `unknown channel ids: ${unknown.join(', ')}`, rule: 3 }]
    : [];
}

const writerOf = (context: SourceContext) =>
  createCorpusWriter({
    db: context.db,
    engine: context.engine,
    clock: context.clock,
    log: context.log,
    background: context.background,
  });

export const messengerSource = defineSource({
  stix: messengerStix,
  id: 1,
  name: 'messenger',
  alias: 'Messenger channels',
  description:
    'Messages posted in tracked messenger channels (Telegram and alike), matched with the search query language.',
  serviceType: 'sync',
  frequency: 'daily',
  args: messengerArgs,
  excludableFields: ['channel_id', 'channel_username', 'user_id', 'media_type'],
  filterableFields: ['channel_id', 'channel_username', 'user_id', 'has_media', 'media_type', 'forwarded_from'],
  sortableFields: ['date', 'channel_id', 'message_id'],
  hasData: true,
  newestRecordAt: newestRecord('messages', 'date'),
  prepare: prepareQuery,
  checkStoredReferences: checkChannels,
  match: matchOne,
  matchMany: (context, rules, until, limit) => createPercolator(rules).run(context, until, limit),
  hitContext: messageContext,
  // The first two names predate source folders; a name is what a store remembers as applied.
  migrations: {
    '0002_messenger': m0002,
    '0006_bulk_fts': m0006,
    'messenger/0003_search_reruns': searchReruns,
    'messenger/0004_search_history_file': searchHistoryFile,
    'messenger/0005_monthly_partitions': monthlyPartitions,
    'messenger/0007_message_origin': messageOrigin,
    'messenger/0008_search_read_position': searchReadPosition,
    'messenger/0009_word_index': wordIndex,
    'messenger/0010_drop_text_trigrams': dropTextTrigrams,
    'messenger/0011_channel_word_index': channelWordIndex,
    'messenger/0012_word_bitmaps': wordBitmaps,
    'messenger/0013_channel_word_bitmaps': channelWordBitmaps,
    'messenger/0014_word_index_pending_list': wordIndexPendingList,
    'messenger/0015_long_words_index': longWordsIndex,
    'messenger/0016_channel_text_index': channelTextIndex,
  },
  ingesters: [
    {
      name: 'messenger',
      description:
        'messenger messages from Telegram Desktop exports (result.json) or JSON Lines files, folders or - (stdin)',
      formats: ['auto', 'telegram', 'jsonl'],
      async run(context, inputs, options) {
        const ingest = createIngestService({ writer: writerOf(context) });
        const results = await ingest.ingest(inputs, {
          format: options.format as IngestFormat,
          category: options.category,
          progress: options.progress,
        });
        const sum = (key: 'channels' | 'added' | 'duplicates') => results.reduce((n, r) => n + r[key], 0);
        const warnings = warningsOf(results.map((result) => ({ input: result.source, warnings: result.warnings })));
        const summary = {
          sources: results.length,
          failed: results.filter((r) => !r.ok).length,
          channels: sum('channels'),
          messages_added: sum('added'),
          duplicates_skipped: sum('duplicates'),
          rejected: results.reduce((n, r) => n + r.rejected.length, 0),
          warnings,
          results,
        };
        const lines = [
          `${summary.sources} sources (${summary.failed} failed): ${summary.channels} channels, ${summary.messages_added} messages added, ${summary.duplicates_skipped} duplicates skipped, ${summary.rejected} rejected`,
        ];
        for (const result of results) {
          for (const rejection of result.rejected.slice(0, 20))
            lines.push(`  rejected ${result.source} ${rejection.location}: ${rejection.reason}`);
          if (result.rejected.length > 20)
            lines.push(`  … and ${result.rejected.length - 20} more rejected in ${result.source}`);
          if (!result.ok) lines.push(`  error: ${result.error}`);
        }
        lines.push(...warningLines(warnings));
        const errors = results.flatMap((result) => [
          ...(result.ok ? [] : [{ location: result.source, reason: result.error ?? 'could not be read' }]),
          ...result.rejected.map((rejection) => ({
            location: `${result.source} ${rejection.location}`,
            reason: rejection.reason,
          })),
        ]);
        const tally = {
          records: summary.messages_added + summary.duplicates_skipped + summary.rejected,
          added: summary.messages_added,
          duplicates: summary.duplicates_skipped,
          rejected: summary.rejected,
          errors: errors.slice(0, REJECTIONS_SHOWN),
          warnings,
        };
        return { summary, lines, failed: summary.failed > 0, tally };
      },
    },
  ],
  async demo(context, now) {
    // Messages dated over the last 60 days, so the demo looks current whenever it is loaded.
    const corpus = await writerOf(context).write(
      generateCorpus({
        seed: 2026,
        channels: 24,
        messages: 3000,
        start: new Date(now - 60 * 86_400_000),
        spanDays: 60,
      }),
    );
    return `Demo corpus: ${corpus.added} messages added (try searching "fresh logs" AND acme-bank.com)`;
  },
});
