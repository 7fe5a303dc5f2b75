import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { promisify } from 'node:util';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../src/db/schema.ts';
import type { Container } from '../../src/container.ts';
import { foldText, type QueryNode } from '../../src/modules/sources/common/query/query-language.ts';

/**
 * What the messenger search benchmark measures Dragnet against besides its own linear scan:
 * the raw engine query (what one would type into sqlite3 or psql), and `grep -i` and `rg -i`
 * over a text dump of the messages.
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

/** A substring test per term: SQLite `instr`, PostgreSQL `LIKE`. */
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

/**
 * A text dump for the command-line peers: every message's original text (as the corpus writer
 * folds it: with the forward origin after it), line breaks inside a message made spaces, one
 * message per line, so a count of lines is a count of messages. Only `channelIds`' messages
 * when given. Not folded: `grep -i` and `rg -i` do the case folding, as an analyst's would.
 */
export async function dumpTexts(
  container: Container,
  file: string,
  channelIds: number[] | null,
): Promise<{ file: string; bytes: number; lines: number }> {
  const out = createWriteStream(file);
  let last = 0;
  let lines = 0;
  for (;;) {
    let query = container.store.db
      .selectFrom('messages')
      .select(['id', 'text', 'forwarded_from'])
      .where('id', '>', last)
      .orderBy('id')
      .limit(50_000);
    if (channelIds) query = query.where('channel_id', 'in', channelIds);
    const rows = await query.execute();
    if (rows.length === 0) break;
    const text = (r: (typeof rows)[number]) => (r.forwarded_from ? `${r.text}\n${r.forwarded_from}` : r.text);
    const chunk = rows.map((r) => text(r).replace(/[\r\n]/g, ' ')).join('\n') + '\n';
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
    last = Number(rows[rows.length - 1]!.id);
    lines += rows.length;
  }
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
  return { file, bytes: (await stat(file)).size, lines };
}

/**
 * The arguments of each stage of a pipeline that counts the lines a query matches, or null when
 * the tools have no honest equivalent (NOT, nesting deeper than an AND of ORs): a term is
 * `-i -F -e term` (a phrase is its text), an OR of terms one stage with an `-e` each, an AND
 * one stage per operand, each reading the lines the stage before kept; the last stage counts
 * (`-c`). Terms as typed: `-i` folds them as it folds the text.
 */
export function peerStages(tree: QueryNode): string[][] | null {
  const patterns = (node: QueryNode): string[] | null => {
    if (node.type === 'term') return [node.value];
    if (node.type === 'or' && node.children.every((child) => child.type === 'term'))
      return node.children.map((child) => (child as { value: string }).value);
    return null;
  };
  const operands = tree.type === 'and' ? tree.children.map(patterns) : [patterns(tree)];
  if (operands.some((operand) => operand === null)) return null;
  return operands.map((operand, i) => [
    '-i',
    '-F',
    ...(i === operands.length - 1 ? ['-c'] : []),
    ...operand!.flatMap((pattern) => ['-e', pattern]),
  ]);
}

/** `grep` or `rg`, and how to run it. */
export interface PeerTool {
  program: 'grep' | 'rg';
  label: string;
}

export const PEER_TOOLS: PeerTool[] = [
  { program: 'grep', label: 'grep -i' },
  { program: 'rg', label: 'rg -i' },
];

/** Whether `program` runs here (`--version` answers). */
export async function toolAvailable(program: string): Promise<boolean> {
  return promisify(execFile)(program, ['--version']).then(
    () => true,
    () => false,
  );
}

const shellQuote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

/**
 * A bash process that runs the peers' pipelines as a user at a terminal would: bash forks and
 * execs each command (about 0.4 ms; a fork of this large Node process took 2 to 6 ms more)
 * and times it with $EPOCHREALTIME, spawn included. The count comes back through a pipe (the
 * command substitution), not /dev/null, where GNU grep stops at the first match. LC_ALL=C.UTF-8,
 * so `-i` folds Cyrillic too.
 */
export class PeerShell {
  private readonly shell: ChildProcess;
  private readonly lines: AsyncIterator<string>;
  private stderr = '';

  constructor() {
    this.shell = spawn('bash', ['--noprofile', '--norc'], {
      env: { ...process.env, LC_ALL: 'C.UTF-8' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.shell.stderr!.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.lines = createInterface({ input: this.shell.stdout! })[Symbol.asyncIterator]();
  }

  /**
   * Runs `program` with `stages` over `file` (each stage reading the lines the one before kept)
   * and answers its count and wall time. Exit status 1 means no line matched (rg then prints
   * nothing); above is an error.
   */
  async run(program: string, stages: string[][], file: string): Promise<{ count: number; ms: number }> {
    const pipeline = stages
      .map((args, i) => [program, ...args, ...(i === 0 ? [file] : [])].map(shellQuote).join(' '))
      .join(' | ');
    this.stderr = '';
    this.shell.stdin!.write(
      `s=$EPOCHREALTIME; out=$(${pipeline}; echo "@\${PIPESTATUS[*]}"); e=$EPOCHREALTIME; echo "$s $e" $out\n`,
    );
    const next = await this.lines.next();
    if (next.done) throw new Error(`the peer shell ended: ${this.stderr.trim()}`);
    const [start, end, ...rest] = next.value.trim().split(/\s+/);
    const statuses = rest.join(' ').replace(/^.*@/, '').split(' ').map(Number);
    if (statuses.some((status) => status > 1))
      throw new Error(`${pipeline} failed (${statuses.join(' ')}): ${this.stderr.trim()}`);
    const output = rest.join(' ').replace(/@.*$/, '').trim();
    return { count: Number(output || '0'), ms: (Number(end) - Number(start)) * 1000 };
  }

  close(): void {
    this.shell.stdin!.end();
  }
}
