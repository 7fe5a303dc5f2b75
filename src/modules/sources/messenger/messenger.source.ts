import { sql } from 'kysely';
import { predicateCompilers } from '../../search/message-search.sql.ts';
import { parseQuery } from '../../search/query-language.ts';
import type { BatchRule, MatchResult, SourceContext, SourceDefinition } from '../source.ts';
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

export const messengerSource: SourceDefinition = {
  id: 1,
  name: 'messenger',
  alias: 'Messenger channels',
  description: 'Messages posted in tracked messenger channels (Telegram and alike), matched with the search query language.',
  serviceType: 'sync',
  frequency: 'daily',
  params: [
    { name: 'query', type: 'String', required: true, hint: 'Search query: terms, "phrases", AND, OR, NOT, ( )', example: '"fresh logs" AND (acme-bank.com OR acmebank)' },
    { name: 'channel_ids', type: 'Array[Int]', required: false, hint: 'Only these channels (ids from messenger-channels)', example: [12, 40] },
    { name: 'unique_only', type: 'Boolean', required: false, hint: 'Count identical texts posted in several channels once', example: true },
    { name: 'context_chars', type: 'Int', required: false, hint: 'Characters of text around the match in each hit', example: 200 },
  ],
  excludableFields: ['channel_id', 'channel_username', 'user_id', 'media_type'],
  filterableFields: ['channel_id', 'channel_username', 'user_id', 'has_media', 'media_type'],
  sortableFields: ['date', 'channel_id', 'message_id'],
  match: matchOne,
  matchMany: (context: SourceContext, rules: BatchRule[], until: number, limit: number) =>
    createPercolator(
      rules.map((rule) => ({ ...rule, args: rule.args as unknown as MessengerArgs })),
      DEFAULT_CONTEXT_CHARS,
    ).run(context, until, limit),
};

