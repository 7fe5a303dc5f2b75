import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../../../db/schema.ts';
import { bulkTransaction } from '../../../../db/bulk-insert.ts';
import type { CopyIn } from '../../../../db/pg-copy.ts';
import type { Engine } from '../../../../db/store.ts';
import type { BackgroundTasks } from '../../../../lib/log.ts';
import { frequentWords } from '../../common/query/word-bitmaps.ts';

/** PostgreSQL advisory lock key of message writers (any constant no other lock uses). */
const MESSAGE_WRITER_LOCK = 0x6d657373;

/**
 * The batches regrouped so that each group holds at most `maxMessages` messages: a channel's
 * batch may be a whole export, and is cut to fit. A batch without messages still comes through
 * (its channel is written). Each group is yielded before the next batch is read.
 */
export async function* transactionGroups<Message, Batch extends { messages: Message[] }>(
  batches: AsyncIterable<Batch> | Iterable<Batch>,
  maxMessages: number,
): AsyncGenerator<{ batches: Batch[]; messages: number }> {
  let pending: Batch[] = [];
  let pendingMessages = 0;
  for await (const batch of batches) {
    let offset = 0;
    do {
      const messages = batch.messages.slice(offset, offset + maxMessages - pendingMessages);
      offset += messages.length;
      pending.push({ ...batch, messages });
      pendingMessages += messages.length;
      if (pendingMessages >= maxMessages) {
        yield { batches: pending, messages: pendingMessages };
        pending = [];
        pendingMessages = 0;
      }
    } while (offset < batch.messages.length);
  }
  if (pending.length > 0) yield { batches: pending, messages: pendingMessages };
}

/**
 * Runs `write` in a transaction that keeps what searches rely on: message ids commit in order,
 * and the new rows are in the trigram index (SQLite, here) or the word index (PostgreSQL,
 * written by `write` with the messages). On PostgreSQL `write` gets `copy`, to stream rows in
 * (src/db/pg-copy.ts). Returns how many messages were added.
 */
export function inMessageTransaction(
  deps: { db: Kysely<Database>; engine: Engine },
  write: (tx: Transaction<Database>, copy: CopyIn | null) => Promise<number>,
): Promise<number> {
  const { engine } = deps;
  return bulkTransaction(deps.db, engine, async (tx, copy) => {
    // PostgreSQL hands out ids when rows are inserted, not when they commit: two writers at
    // once could commit id 101 before id 100, and a search that saw 101 would miss 100
    // below its watermark, which a later re-read would then find. Writers take turns, so a
    // committed id is never below one still to commit. (SQLite has one writer at a time.)
    if (engine === 'postgres') await sql`select pg_advisory_xact_lock(${MESSAGE_WRITER_LOCK})`.execute(tx);
    const lastIdBefore = engine === 'sqlite' ? await lastMessageId(tx) : 0;
    const added = await write(tx, copy);
    // SQLite: the trigram index of the new rows in one statement (migration 0006).
    if (engine === 'sqlite' && added > 0) {
      await sql`insert into messages_fts (rowid, text_folded) select id, text_folded from messages where id > ${lastIdBefore}`.execute(
        tx,
      );
    }
    return added;
  });
}

/**
 * Rows the word index gains, beyond a tenth of those the statistics knew of, before the writers
 * analyze it themselves (autovacuum's own rule, 50 rows and a tenth, analyzes tiny stores for
 * nothing).
 */
const WORD_STATISTICS_ROWS = 1000;
const WORD_STATISTICS_SHARE = 0.1;

/**
 * PostgreSQL: fresh statistics of the word index after a write, and bitmaps for the words they
 * now find frequent (word-bitmaps.ts). Words become frequent by ANALYZE's most common elements,
 * which autovacuum refreshes only where it is on (the CI server's is off) and once a tenth of
 * the table changed: a store loaded in one go was searched without a bitmap (`password` over 1M
 * messages 322 ms instead of 22) until an ANALYZE and then a write came. So the writers analyze
 * the word index once it grew by a tenth (as autovacuum would) and build the new bitmaps in a
 * writer's turn, as a write would.
 */
async function refreshWordStatistics(db: Kysely<Database>): Promise<void> {
  // The messages indexed (the channels' sizes, moved by each write) against the rows the last
  // ANALYZE counted: the statistics' own counter of changes reaches them seconds after the
  // writes, and an ANALYZE run before that would count the same writes again.
  const { rows } = await sql<{ indexed: string; known: number }>`
    select (select coalesce(sum(messages), 0) from message_channel_sizes) as indexed, reltuples as known
    from pg_class where oid = 'message_words'::regclass`.execute(db);
  const known = Math.max(0, rows[0]?.known ?? 0);
  if (Number(rows[0]?.indexed ?? 0) - known < WORD_STATISTICS_ROWS + WORD_STATISTICS_SHARE * known) return;
  await sql`analyze message_words`.execute(db);
  await db.transaction().execute(async (tx) => {
    await sql`select pg_advisory_xact_lock(${MESSAGE_WRITER_LOCK})`.execute(tx);
    await frequentWords(tx);
  });
}

/**
 * What a writer calls once it added `added` messages: on PostgreSQL, the word statistics'
 * refresh in the background (an ANALYZE and a bitmap's build take seconds at a million
 * messages, which the write's caller need not wait for: searches are exact without bitmaps),
 * one at a time (the next write looks again).
 */
export function wordStatisticsRefresh(deps: { db: Kysely<Database>; engine: Engine; background: BackgroundTasks }) {
  let refreshing = false;
  return (added: number) => {
    if (deps.engine !== 'postgres' || added === 0 || refreshing) return;
    refreshing = true;
    deps.background.run('the word statistics after a write', () =>
      refreshWordStatistics(deps.db).finally(() => (refreshing = false)),
    );
  };
}

async function lastMessageId(tx: Transaction<Database>): Promise<number> {
  const row = await tx
    .selectFrom('messages')
    .select((eb) => eb.fn.max('id').as('max'))
    .executeTakeFirst();
  return Number(row?.max ?? 0);
}
