import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../../../db/schema.ts';
import { bulkTransaction } from '../../../../db/bulk-insert.ts';
import type { CopyIn } from '../../../../db/pg-copy.ts';
import type { Engine } from '../../../../db/store.ts';

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

async function lastMessageId(tx: Transaction<Database>): Promise<number> {
  const row = await tx
    .selectFrom('messages')
    .select((eb) => eb.fn.max('id').as('max'))
    .executeTakeFirst();
  return Number(row?.max ?? 0);
}
