import { execFile } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../src/db/schema.ts';
import type { Container } from '../../src/container.ts';
import { foldText, type QueryNode } from '../../src/modules/sources/common/query/query-language.ts';

/**
 * What the messenger search benchmark measures Dragnet against besides its own linear scan:
 * the raw engine query (what one would type into sqlite3 or psql) and `grep -c -F` over a
 * text dump of the messages.
 */

const quote = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** FTS5: a term of three or more characters is a phrase of its trigrams; null where the index cannot answer. */
function ftsQuery(node: QueryNode): string | null {
  switch (node.type) {
    case 'term': {
      const folded = foldText(node.value);
      return [...folded].length >= 3 ? `"${folded.replaceAll('"', '""')}"` : null;
    }
    case 'not':
      return null;
    case 'or': {
      const parts = node.children.map(ftsQuery);
      return parts.every((p) => p !== null) ? `(${parts.join(' OR ')})` : null;
    }
    case 'and': {
      const positives = node.children.filter((c) => c.type !== 'not').map(ftsQuery);
      const negatives = node.children.flatMap((c) => (c.type === 'not' ? [ftsQuery(c.child)] : []));
      if (positives.length === 0 || [...positives, ...negatives].some((p) => p === null)) return null;
      return `((${positives.join(' AND ')})${negatives.map((n) => ` NOT ${n}`).join('')})`;
    }
  }
}

/** A substring test per term: SQLite `instr`, PostgreSQL `LIKE` (which the pg_trgm GIN index serves). */
function rowPredicate(node: QueryNode, engine: 'sqlite' | 'postgres'): string {
  switch (node.type) {
    case 'term': {
      const folded = foldText(node.value);
      return engine === 'sqlite'
        ? `instr(m.text_folded, ${quote(folded)}) > 0`
        : `m.text_folded like ${quote(`%${folded.replace(/[\\%_]/g, (c) => `\\${c}`)}%`)}`;
    }
    case 'not':
      return `not (${rowPredicate(node.child, engine)})`;
    default:
      return `(${node.children.map((c) => rowPredicate(c, engine)).join(node.type === 'and' ? ' and ' : ' or ')})`;
  }
}

export interface RawAnswer {
  total: number;
  channels: number;
  newest: string[];
}

/**
 * (d) The raw engine query: count, distinct channels and the newest 10 in two plain statements,
 * the trigram index asked the whole query the way its documentation shows (an FTS5 MATCH of
 * phrases on SQLite, `LIKE '%term%'` on PostgreSQL), no plan chosen by estimates.
 */
export function rawEngineQuery(
  container: Container,
  tree: QueryNode,
  channelIds: number[] | null,
): () => Promise<RawAnswer> {
  const engine = container.store.engine;
  const fts = engine === 'sqlite' ? ftsQuery(tree) : null;
  const predicate = fts
    ? `m.id in (select rowid from messages_fts where messages_fts match ${quote(fts)})`
    : rowPredicate(tree, engine);
  const where = `${predicate}${channelIds ? ` and m.channel_id in (${channelIds.join(', ')})` : ''}`;
  const counts = sql.raw(
    `select count(*) as total, count(distinct m.channel_id) as channels from messages m where ${where}`,
  );
  const newest = sql.raw(
    `select m.channel_id, m.message_id from messages m where ${where} order by m.date desc, m.id desc limit 10`,
  );
  const run = async (db: Kysely<Database>, statement: RawBuilder<unknown>) =>
    (await statement.execute(db)).rows as Record<string, number>[];
  const answer = async (db: Kysely<Database>) => {
    const [count] = await run(db, counts);
    const rows = await run(db, newest);
    return {
      total: Number(count!.total),
      channels: Number(count!.channels),
      newest: rows.map((r) => `${r.channel_id}:${r.message_id}`),
    };
  };
  if (engine === 'sqlite') return () => answer(container.store.db);
  // PostgreSQL may walk the date index for a rare term and check every row (seconds to minutes).
  return () =>
    container.store.db.transaction().execute(async (tx) => {
      await sql`set local statement_timeout = 120000`.execute(tx);
      return answer(tx);
    });
}

export interface GrepPeer {
  file: string;
  bytes: number;
  /** grep's count (lines = messages holding the term). */
  count: number;
  times: number[];
}

/**
 * `grep -c -F term` over a dump of every message's folded text, one message per line (line
 * breaks inside a message become spaces): the peer an analyst would otherwise pick. Timed after
 * one unmeasured run, so the dump is in the page cache as the store's pages are.
 */
export async function grepPeer(container: Container, dir: string, term: string, runs: number): Promise<GrepPeer> {
  const file = path.join(dir, 'messages.txt');
  const out = createWriteStream(file);
  let last = 0;
  for (;;) {
    const rows = await container.store.db
      .selectFrom('messages')
      .select(['id', 'text_folded'])
      .where('id', '>', last)
      .orderBy('id')
      .limit(50_000)
      .execute();
    if (rows.length === 0) break;
    const chunk = rows.map((r) => r.text_folded.replace(/[\r\n]+/g, ' ')).join('\n') + '\n';
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
    last = Number(rows[rows.length - 1]!.id);
  }
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
  const grep = async () => {
    // grep exits with 1 when no line matches; its count (0) is still on stdout.
    const { stdout } = await promisify(execFile)('grep', ['-c', '-F', '--', term, file]).catch(
      (error: { code?: number; stdout?: string }) => {
        if (error.code === 1 && error.stdout !== undefined) return { stdout: error.stdout };
        throw error;
      },
    );
    return Number(stdout.trim());
  };
  await grep();
  const times: number[] = [];
  let count = 0;
  for (let run = 0; run < runs; run++) {
    const t = performance.now();
    count = await grep();
    times.push(performance.now() - t);
  }
  return { file, bytes: (await stat(file)).size, count, times };
}
