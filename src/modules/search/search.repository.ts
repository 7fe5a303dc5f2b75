import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { Engine } from '../../db/store.ts';

export interface MatchFilter {
  predicate: RawBuilder<boolean>;
  channelIds?: number[];
  /** Only messages that existed at search time (history re-reads). */
  maxMessageId?: number;
}

/** A message with its channel's names, as search and monitoring read it. */
export interface MessageRow {
  id: number;
  message_id: number;
  channel_id: number;
  username: string | null;
  title: string;
  user_id: number | null;
  text: string;
  text_hash: string;
  date: number;
  has_media: number;
  media_type: string | null;
  file_name: string | null;
  links: string | null;
}

export interface SnapshotRow extends MessageRow {
  rank: number;
}

function whereClause(filter: MatchFilter): RawBuilder<boolean> {
  const parts: RawBuilder<unknown>[] = [filter.predicate];
  if (filter.channelIds?.length) parts.push(sql`m.channel_id in (${sql.join(filter.channelIds)})`);
  if (filter.maxMessageId !== undefined) parts.push(sql`m.id <= ${filter.maxMessageId}`);
  return sql<boolean>`${sql.join(parts, sql` and `)}`;
}

export function createSearchRepository(db: Kysely<Database>, engine: Engine) {
  // PostgreSQL's autovacuum never visits temporary tables, so a DELETE would leave every row of
  // a broad search behind as dead tuples for each later search on that connection to scan;
  // TRUNCATE starts it afresh. SQLite empties a table without a WHERE clause just as quickly.
  const clearHits = sql.raw(engine === 'postgres' ? 'truncate search_hits' : 'delete from search_hits');

  return {
    async maxMessageId(): Promise<number> {
      const row = await db.selectFrom('messages').select((eb) => eb.fn.max('id').as('max')).executeTakeFirst();
      return Number(row?.max ?? 0);
    },

    /**
     * Finds the hits of a search once and keeps them in a per-connection scratch table
     * (`search_hits`), from which the counts and the snapshot are then taken: the predicate,
     * the expensive part, is evaluated once per search instead of once for the counts and
     * once for the snapshot. Runs inside the caller's transaction, which holds the connection.
     */
    async collectHits(tx: Transaction<Database>, filter: MatchFilter, uniqueOnly: boolean) {
      await sql`create temp table if not exists search_hits (id bigint primary key, date bigint not null, channel_id bigint not null, text_hash text not null)`.execute(tx);
      await clearHits.execute(tx);
      await sql`insert into search_hits (id, date, channel_id, text_hash)
        select m.id, m.date, m.channel_id, m.text_hash from messages m where ${whereClause(filter)}`.execute(tx);
      const uniqueColumn = uniqueOnly ? sql`count(distinct text_hash)` : sql`count(*)`;
      const { rows } = await sql<{ total: number; channels: number; groups: number }>`
        select count(*) as total, count(distinct channel_id) as channels, ${uniqueColumn} as groups from search_hits`.execute(tx);
      const row = rows[0]!;
      return { total: Number(row.total), channels: Number(row.channels), groups: Number(row.groups) };
    },

    /** Stores the ranked ids of the newest `cap` collected hits (one per distinct text with uniqueOnly), then lets the scratch table go. */
    async storeSnapshot(tx: Transaction<Database>, historyId: number, options: { uniqueOnly: boolean; cap: number }): Promise<void> {
      // With uniqueOnly, the newest message of each distinct text represents it.
      const source = options.uniqueOnly
        ? sql`(select id, date from (select id, date, row_number() over (partition by text_hash order by date desc, id desc) as n from search_hits) g where n = 1)`
        : sql`search_hits`;
      await sql`
        insert into search_history_results (history_id, rank, message_id)
        select ${historyId}, row_number() over (order by s.date desc, s.id desc) as position, s.id
        from ${source} s
        order by position
        limit ${options.cap}`.execute(tx);
      await clearHits.execute(tx);
    },

    async readSnapshot(historyId: number, fromRank: number, toRank: number): Promise<SnapshotRow[]> {
      const { rows } = await sql<SnapshotRow>`
        select r.rank, m.id, m.message_id, m.channel_id, m.user_id, m.text, m.text_hash, m.date, m.has_media,
               m.media_type, m.file_name, m.links, c.username, c.title
        from search_history_results r
        join messages m on m.id = r.message_id
        join channels c on c.id = m.channel_id
        where r.history_id = ${historyId} and r.rank >= ${fromRank} and r.rank <= ${toRank}
        order by r.rank`.execute(db);
      return rows;
    },

    /** The channels each of these texts appears in, as of the watermark. */
    async channelsOfTexts(hashes: string[], maxMessageId: number, channelIds?: number[]) {
      if (hashes.length === 0) return new Map<string, string[]>();
      let query = db
        .selectFrom('messages as m')
        .innerJoin('channels as c', 'c.id', 'm.channel_id')
        .select(['m.text_hash', 'c.id', 'c.username', 'c.title'])
        .distinct()
        .where('m.text_hash', 'in', hashes)
        .where('m.id', '<=', maxMessageId)
        .orderBy('c.id');
      if (channelIds?.length) query = query.where('m.channel_id', 'in', channelIds);
      const byHash = new Map<string, string[]>();
      for (const row of await query.execute()) {
        const list = byHash.get(row.text_hash) ?? [];
        list.push(row.username ?? row.title);
        byHash.set(row.text_hash, list);
      }
      return byHash;
    },
  };
}

export type SearchRepository = ReturnType<typeof createSearchRepository>;
