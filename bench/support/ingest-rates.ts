import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import type { Container } from '../../src/container.ts';
import { seededRandom } from '../../src/modules/sources/common/seeded-random.ts';
import { generateCorpus, type ChannelBatch, type MessageInput } from '../../src/modules/sources/messenger/index.ts';

/**
 * The messenger ingest rate as a store grows: `container.corpus.write` (the code `dragnet ingest`,
 * the API and the inbox end in) timed chunk by chunk, so that the rate of the first and of the
 * last N messages of a load can be compared, with the CPU of this process and of the server
 * processes that did the writing.
 */

export type CorpusKind = 'generated' | 'repetitive';

const CORPUS_START = new Date('2025-01-01T00:00:00Z');
const SPAN_DAYS = 365;
const CHANNELS = 500;

/**
 * Chatter about one campaign: short messages (4–14 words) drawn from 50 words, so that nearly
 * every message shares its trigrams with most others, the case where pg_trgm's posting lists
 * are longest. Channels and dates are laid out as the generated corpus's are.
 */
const CHATTER = (
  'dump fresh logs combo acme bank login panel access valid checked mail pass cookies session ' +
  'stealer cloud free sale price update new private drop leak base shop vault admin vpn rdp ' +
  'shell crypt bot spam otp card bin full info sell buy today tonight ready link dm pm dox cc'
).split(' ');

function* repetitiveCorpus(options: { seed: number; messages: number; channels: number }): Generator<ChannelBatch> {
  const random = seededRandom(options.seed);
  const perChannel = Math.ceil(options.messages / options.channels);
  const spanMs = SPAN_DAYS * 86_400_000;
  let index = 0;
  for (let c = 0; c < options.channels && index < options.messages; c++) {
    const username = `chatter_${c + 1}`;
    let batch: MessageInput[] = [];
    const flush = () => {
      const messages = batch;
      batch = [];
      return { channel: { platform: 'telegram', username, title: `Chatter ${c + 1}` }, messages };
    };
    for (let m = 0; m < perChannel && index < options.messages; m++, index++) {
      const words = Array.from(
        { length: 4 + Math.floor(random() * 11) },
        () => CHATTER[Math.floor(random() * CHATTER.length)],
      );
      batch.push({
        messageId: m + 1,
        userId: 100_000 + Math.floor(random() * 5000),
        text: words.join(' '),
        date: CORPUS_START.getTime() + Math.floor(((m * options.channels + c) / options.messages) * spanMs),
        hasMedia: false,
        mediaType: null,
        fileName: null,
        links: null,
      });
      if (batch.length === 1000) yield flush();
    }
    if (batch.length) yield flush();
  }
}

export function benchCorpus(kind: CorpusKind, messages: number): Iterable<ChannelBatch> {
  return kind === 'repetitive'
    ? repetitiveCorpus({ seed: 7, messages, channels: CHANNELS })
    : generateCorpus({ seed: 424_242, channels: CHANNELS, messages, start: CORPUS_START, spanDays: SPAN_DAYS });
}

/** Where a load stood after a chunk: messages written, time in write(), CPU of each side. */
interface Mark {
  messages: number;
  writeMs: number;
  nodeCpuMs: number;
  /** The store's server processes that served this load (PostgreSQL), null on SQLite. */
  serverCpuMs: number | null;
}

export interface WindowRate {
  label: string;
  messages: number;
  msgPerS: number;
  nodeCpuS: number;
  serverCpuS: number | null;
}

const nodeCpuMs = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

// /proc/<pid>/stat counts CPU in clock ticks, 100 a second on Linux.
const TICKS_PER_S = 100;

function procCpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime: fields 14 and 15 of stat, 12 and 13 after the command name.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_S;
  } catch {
    return null;
  }
}

/**
 * CPU of the PostgreSQL processes of this load, when the server runs on this machine: the
 * database's backends, and the WAL writer, checkpointer and background writer that its writes
 * keep busy. A process found at the first call counts from then; one started later (a backend
 * of the load's) counts whole. A backend that ends between two calls loses its last interval.
 */
function serverCpu(container: Container) {
  const base = new Map<number, number>();
  let first = true;
  return async (): Promise<number | null> => {
    if (container.store.engine !== 'postgres') return null;
    const { rows } = await sql<{ pid: number }>`select pid from pg_stat_activity
      where datname = current_database() or backend_type in ('walwriter', 'checkpointer', 'background writer')`.execute(
      container.store.db,
    );
    let total = 0;
    for (const { pid } of rows) {
      const now = procCpuMs(pid);
      if (now === null) continue;
      if (!base.has(pid)) base.set(pid, first ? now : 0);
      total += now - base.get(pid)!;
    }
    first = false;
    return total;
  };
}

/**
 * Writes `batches` in chunks of `chunk` messages and returns the rates of the whole load, of its
 * first and of its last `window` messages (as near as chunk boundaries allow).
 */
export async function measureIngestRates(
  container: Container,
  batches: Iterable<ChannelBatch>,
  options: { chunk: number; window: number; onChunk?: (written: number) => void },
): Promise<{ total: WindowRate; first: WindowRate; last: WindowRate }> {
  const server = serverCpu(container);
  const marks: Mark[] = [{ messages: 0, writeMs: 0, nodeCpuMs: 0, serverCpuMs: await server() }];
  let pending: ChannelBatch[] = [];
  let inPending = 0;
  const flush = async () => {
    const before = marks.at(-1)!;
    const [t, c] = [performance.now(), nodeCpuMs()];
    const totals = await container.corpus.write(pending);
    const [writeMs, cpuMs] = [performance.now() - t, nodeCpuMs() - c];
    if (totals.added !== inPending) throw new Error(`corpus.write added ${totals.added} of ${inPending} messages`);
    marks.push({
      messages: before.messages + inPending,
      writeMs: before.writeMs + writeMs,
      nodeCpuMs: before.nodeCpuMs + cpuMs,
      serverCpuMs: await server(),
    });
    options.onChunk?.(before.messages + inPending);
    pending = [];
    inPending = 0;
  };
  for (const batch of batches) {
    pending.push(batch);
    inPending += batch.messages.length;
    if (inPending >= options.chunk) await flush();
  }
  if (inPending) await flush();

  const end = marks.at(-1)!;
  const firstEnd = marks.find((mark) => mark.messages >= options.window) ?? end;
  const lastStart = [...marks].reverse().find((mark) => end.messages - mark.messages >= options.window) ?? marks[0]!;
  return {
    total: rate('all', marks[0]!, end),
    first: rate('first', marks[0]!, firstEnd),
    last: rate('last', lastStart, end),
  };
}

function rate(label: string, from: Mark, to: Mark): WindowRate {
  const messages = to.messages - from.messages;
  return {
    label,
    messages,
    msgPerS: messages / ((to.writeMs - from.writeMs) / 1000),
    nodeCpuS: (to.nodeCpuMs - from.nodeCpuMs) / 1000,
    serverCpuS:
      to.serverCpuMs === null || from.serverCpuMs === null ? null : (to.serverCpuMs - from.serverCpuMs) / 1000,
  };
}
